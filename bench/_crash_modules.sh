# Sourced by device_round14.sh and device_round16.sh: FILES, the 20 test modules of the `deno task test` process that
# segfaulted (status 139) on an H100 in run 36, in the runner's order.
FILES="tests/stream/gpu_errors_test.ts tests/stream/hold_test.ts tests/stream/launch_encoding_test.ts
tests/stream/read_staging_test.ts tests/stream/streams_test.ts tests/suite_runner_test.ts tests/tune/client_autotune_test.ts
tests/tune/matmul_test.ts tests/tune/noise_test.ts tests/tune/profile_measurer_test.ts tests/tune/tune_file_paths_test.ts
tests/tune/tune_plan_test.ts tests/tune/tune_store_test.ts tests/tune/tuner_test.ts tests/worker/backend_advice_test.ts
tests/worker/command_ring_test.ts tests/worker/error_codec_test.ts tests/worker/exit_status_test.ts
tests/worker/shared_buffers_test.ts tests/worker/worker_client_test.ts"
