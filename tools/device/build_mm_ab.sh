#!/bin/bash
# Builds /tmp/mm_ab.so for tools/device/mm_ab_probe.py: one object per kernel variant of
# bench/csrc/mm_ab.c (names: mm_ab_<variant>), linked into one shared library.
# pfN: the shipped kernel with its a-panel prefetch N k-steps ahead (0: none); kc384: a
# 384-deep K block; mr8 / mr12: mm_mr_probe.c's 8 x 32 and 12 x 32 tiles.
set -e
I="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
C="gcc -O3 -march=x86-64-v4 -fPIC -fopenmp -c $I bench/csrc/mm_ab.c"
objs=""
for pf in 0 8 16 24 32; do
  $C -DMM_AB_NAME=mm_ab_pf$pf -DMM_PF_A=$pf -o /tmp/mm_ab_pf$pf.o; objs="$objs /tmp/mm_ab_pf$pf.o"
done
$C -DMM_AB_NAME=mm_ab_kc384 -DMM_KC=384 -DMM_NC=256 -DMM_MC=144 -o /tmp/mm_ab_kc384.o
$C -DMM_AB_NAME=mm_ab_mr8 -DMM_AB_MR=8 -o /tmp/mm_ab_mr8.o
$C -DMM_AB_NAME=mm_ab_mr12 -DMM_AB_MR=12 -o /tmp/mm_ab_mr12.o
gcc -shared -fopenmp $objs /tmp/mm_ab_kc384.o /tmp/mm_ab_mr8.o /tmp/mm_ab_mr12.o -o /tmp/mm_ab.so
