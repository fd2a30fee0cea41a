#!/bin/sh
# Stands in for a JAX program in the capture tests: prints a line, then writes what XLA's
# --xla_dump_to would (the files of tests/data/xla_dump_mlp) into the folder XLA_FLAGS names.
# FAKE_XLA_EXIT=N makes it fail with N after dumping; FAKE_XLA_DUMP=0 makes it dump nothing.
dir=$(printf '%s\n' $XLA_FLAGS | sed -n 's/^--xla_dump_to=//p' | tail -n 1)
if [ -z "$dir" ]; then
    echo "fake_xla_program: no --xla_dump_to in XLA_FLAGS" >&2
    exit 3
fi
echo "step 1: loss 0.693"
if [ "${FAKE_XLA_DUMP:-1}" != 0 ]; then
    cp "$(dirname "$0")"/xla_dump_mlp/module_*.txt "$dir"/
fi
exit "${FAKE_XLA_EXIT:-0}"
