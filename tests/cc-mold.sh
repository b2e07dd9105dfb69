#!/bin/sh
# The C compiler driver as the linker, with mold (tests/run.sh).
exec cc -fuse-ld=mold "$@"
