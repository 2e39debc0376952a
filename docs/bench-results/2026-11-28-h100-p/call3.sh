#!/usr/bin/env bash
# Device call 3 of session p: the single-thread grid of arena, pool and null, alternating this
# tree (new: the arena's one-arena releases skip the empty owner map, arena_for's miss out of
# line), new with the alignment check inline (newal), and 4a3118d (head); rounds as given.
set -u
final=${1:?out dir}; rounds=${2:-8}; mkdir -p "$final"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
PREFIX=ra VARIANTS="new newal head" FILTER='^random/(arena|pool|null)/' TIMEOUT=100 \
  bash scripts/ab_call.sh $final/st_ab $rounds | tail -60
