#!/bin/sh
# tests/fuzz/run.sh SECONDS: builds the libFuzzer harnesses (tests/fuzz/*.cpp) with
# clang++-15, AddressSanitizer and UndefinedBehaviorSanitizer in build/fuzz (its own build
# directory; libstdc++ 12's <expected> needs __cpp_concepts >= 202002L, which clang 15 does
# not define: it is given), then runs each for SECONDS from its seed corpus
# (tests/fuzz/corpus/NAME, read only; what a run finds is kept in build/fuzz/corpus/NAME).
# Exit status 0 where no harness found anything; else 1, with the input that failed in
# build/fuzz/artifacts and the sanitizer's report above. .ci/run runs it with 60.
set -eu
seconds=${1:?usage: tests/fuzz/run.sh SECONDS}
cd "$(dirname "$0")/../.."
command -v clang++-15 >/dev/null || { echo "tests/fuzz/run.sh: clang++-15 not found (tools/deps.sh installs clang-15)" >&2; exit 1; }
build=build/fuzz
flags="-D__cpp_concepts=202002L -Wno-macro-redefined -fsanitize=fuzzer-no-link,address,undefined"
flags="$flags -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_C_COMPILER=clang-15 -DCMAKE_CXX_COMPILER=clang++-15 \
  -DCMAKE_CXX_FLAGS="$flags" -DRIG_TESTS=OFF -DRIG_BENCH=OFF -DWITH_CUDA=OFF -DWITH_HIP=OFF -DRIG_FUZZ=ON >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" -j"$jobs" --target fuzz
mkdir -p "$build/artifacts"
failed=""
for harness in bus_address sysfs_tree cq_ring hostile_device; do
  mkdir -p "$build/corpus/$harness"
  echo "+ fuzz_$harness for ${seconds} s"
  if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       "$build/tests/fuzz/fuzz_$harness" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
       -artifact_prefix="$build/artifacts/$harness-" "$build/corpus/$harness" "tests/fuzz/corpus/$harness" 2>"$build/$harness.log"; then
    tail -n 60 "$build/$harness.log" >&2
    failed="$failed $harness"
  else
    grep -E "^stat::number_of_executed_units|^Done" "$build/$harness.log" | sed "s/^/  /" || true
  fi
done
[ -z "$failed" ] || { echo "tests/fuzz/run.sh: found something:$failed (inputs in $build/artifacts)" >&2; exit 1; }
echo "tests/fuzz/run.sh: nothing found in ${seconds} s each"
