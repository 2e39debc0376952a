#!/bin/bash
# Session ag, call 2: callK.sh with a third variant, expect (only the test of expect_large_size
# inlined), to see whether the small rows move with a layout change alone. Run as
# `R=8 bash build-ab/callL.sh` with callK.sh beside it in build-ab/.
VARIANTS="keyed expect base2" bash "$(dirname "$0")/callK.sh"
