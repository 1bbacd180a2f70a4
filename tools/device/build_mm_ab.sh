#!/bin/bash
# Builds /tmp/mm_ab.so for tools/device/mm_ab_probe.py: one object per kernel variant of
# bench/csrc/mm_ab.c (names: mm_ab_<variant>), linked into one shared library.
set -e
I="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
C="gcc -O3 -march=x86-64-v4 -fPIC -fopenmp -c $I bench/csrc/mm_ab.c"
$C -DMM_AB_NAME=mm_ab_base -o /tmp/mm_ab_base.o
$C -DMM_AB_NAME=mm_ab_pf16 -DMM_PF_A=16 -o /tmp/mm_ab_pf16.o
$C -DMM_AB_NAME=mm_ab_kc384 -DMM_KC=384 -DMM_NC=256 -DMM_MC=144 -o /tmp/mm_ab_kc384.o
$C -DMM_AB_NAME=mm_ab_mr8 -DMM_AB_MR=8 -o /tmp/mm_ab_mr8.o
$C -DMM_AB_NAME=mm_ab_mr12 -DMM_AB_MR=12 -o /tmp/mm_ab_mr12.o
gcc -shared -fopenmp /tmp/mm_ab_base.o /tmp/mm_ab_pf16.o /tmp/mm_ab_kc384.o /tmp/mm_ab_mr8.o \
    /tmp/mm_ab_mr12.o -o /tmp/mm_ab.so
