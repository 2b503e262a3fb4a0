/**
 * Watching a device for what happens to it outside any call: uncaptured
 * errors and loss.
 *
 * @module
 */

import type { DeviceLostError } from "../errors.ts";
import { deviceLostError } from "./server_setup.ts";

/** What a watcher is told. */
export interface DeviceEvents {
  /** An uncaptured error (WebGPU does not say whose: the device may be shared). */
  onError(error: GPUError): void;
  /** The device was lost or destroyed. */
  onLoss(error: DeviceLostError): void;
}

/**
 * Listens to `device`'s uncaptured errors and its loss until the returned
 * function is called. The handlers are reached through a holder cleared then:
 * a caller's device outlives its clients and must not keep them alive
 * through its `lost` promise or its listener.
 *
 * @param device The device.
 * @param events The handlers.
 * @returns Stops listening.
 */
export function watchDevice(device: GPUDevice, events: DeviceEvents): () => void {
  const holder: { events: DeviceEvents | null } = { events };
  const onError = (ev: Event): void => holder.events?.onError((ev as GPUUncapturedErrorEvent).error);
  device.addEventListener("uncapturederror", onError);
  device.lost.then((info) => holder.events?.onLoss(deviceLostError(info)));
  return () => {
    holder.events = null;
    device.removeEventListener("uncapturederror", onError);
  };
}
