#!/usr/bin/env bash
# Developer tool (not shipped): compiles the C probes of bench/csrc into /tmp for a device
# job: wake_probe, add_probe (this CPU), add_lib.so (ggml_cy's avx512 level flags),
# pool_new (the pool of this tree) and, when tools/device/old_gcy_pool.h is carried
# (uncommitted: a pool header from an earlier commit), pool_old.
set -eu
cd "$(dirname "$0")/../.."
I=ggml_cy/cpu/csrc
gcc -O3 -march=native -I$I bench/csrc/wake_probe.c -o /tmp/wake_probe -lpthread
gcc -O3 -march=native -fopenmp -I$I bench/csrc/add_probe.c -o /tmp/add_probe -lpthread
gcc -O3 -march=x86-64-v4 -fopenmp -fPIC -shared -I$I bench/csrc/add_lib.c -o /tmp/add_lib.so -lpthread
gcc -O2 -fopenmp -I$I bench/csrc/pool_probe.c -o /tmp/pool_new -lpthread
if [ -f tools/device/old_gcy_pool.h ]; then
  mkdir -p /tmp/oldpool && cp tools/device/old_gcy_pool.h /tmp/oldpool/gcy_pool.h
  gcc -O2 -fopenmp -I/tmp/oldpool bench/csrc/pool_probe.c -o /tmp/pool_old -lpthread
fi
