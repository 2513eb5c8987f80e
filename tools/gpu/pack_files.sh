# What a lease's pack holds, sourced by repro_session.sh (its pack at the end) and poll.sh (partial.tar before that), from the
# repository root or beside them: one list of what comes back in the pack and what does not.
copy_records() {   # RUNS_DIR DEST [trained]: each run folder's records into DEST/<run>/ (trained: only runs that wrote run.json);
  # a file is written under a temporary name, and only when it changed
  local d f t
  for d in "$1"/*/; do [ -d "$d" ] || continue; [ -n "${3:-}" ] && [ ! -f "$d/run.json" ] && continue
    mkdir -p "$2/$(basename "$d")"
    for f in config.json metrics.jsonl run.json curves.png; do t=$2/$(basename "$d")/$f; [ -f "$d/$f" ] || continue
      cmp -s "$d/$f" "$t" || { cp "$d/$f" "$t.tmp" && mv "$t.tmp" "$t"; }; done; done
}
pack_tar() {   # TAR S: job folder S's events, evaluations, logs, records and side job; no checkpoints or weights (they come back
  # in 15 MiB pieces, WEIGHTS=1), no float16 run copies, no AFF state or network (pieces too)
  tar -cf "$1" --exclude='checkpoint.pt' --exclude='weights.pt' --exclude='*.pt.*' --exclude='side/runs' --exclude='pack.tar' \
    --exclude='weights' --exclude='f16' --exclude='aff-partial.pt' --exclude='aff-head.pt' --exclude='*-eval-aff.pt' \
    -C "$2" events.log eval logs $( [ -d "$2/records" ] && echo records) $( [ -d "$2/side" ] && echo side)
}
