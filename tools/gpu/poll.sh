#!/usr/bin/env bash
# GPU machine: wait (at most WAIT seconds) for tools/gpu/compare.sh to finish, print its events and each run's progress,
# and once it is DONE copy its pack to $OUT (pack.tar, plus the event log, the notebooks' printed measurements and their
# records as plain files for a quick look, and the weights pieces of repro_session.sh WEIGHTS=1). Run it again until it prints DONE.
# Before DONE each call brings partial.tar (what is finished so far: records, fitted heads, an evaluation's pieces, logs) and
# the weights pieces of every run whose export the events log already announces with its sha256: a machine taken back before
# DONE (a kind no longer lent, a failed call) then loses only the work in flight. land_five_seed.py land takes partial.tar
# like pack.tar, and --weights joins the pieces (checked against that sha256).
# Usage (a call brings back at most 8 files and 64 MiB: the pack, the event log and up to 6 weights pieces within WMAX_MB; call again for the rest): bash tools/gpu/poll.sh          (WAIT=60 bash tools/gpu/poll.sh for a quick look)
S=${S:-/root/swaro/compare}; R=${RUNS:-/root/swaro/runs}; W=${WAIT:-540}; OUT=${OUT:-/tmp/out}; LOG=${LOG:-/root/swaro/compare.log}
mkdir -p "$OUT"; t0=$(date +%s)
while [ ! -f $S/DONE ] && [ $(( $(date +%s) - t0 )) -lt $W ]; do sleep 5; done
echo "== events"; cat $S/events.log 2>/dev/null
echo "== runs"
for f in $R/*/metrics.jsonl; do [ -f "$f" ] && echo "$(basename $(dirname $f)): $(wc -l < $f) epochs; last: $(tail -1 $f | cut -c1-160)"; done
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader 2>/dev/null
pieces() {   # repro_session.sh WEIGHTS=1 (and AFF): at most 6 pieces a call, within WMAX_MB (default 60 MiB: a call brings back at
  # most 8 files and 64 MiB together) with what is already in $OUT; before DONE only those of exports the events log announces
  # (the line comes once the cutting ended). Which pieces: those no earlier call copied ($S/poll.sent lists them: the set
  # grows between calls, so a count would skip or repeat pieces); WAGAIN=1 sends every piece again (a call whose files did
  # not come back); WFROM=k, by hand, the pieces from the k-th on in this call's list
  local all=($(ls $S/weights/*.weights.pt.* $S/side/weights/*.weights.pt.* 2>/dev/null)) ws=() f n
  [ -n "${WAGAIN:-}" ] && rm -f $S/poll.sent
  for f in "${all[@]}"; do n=$(basename $f); n=${n%.weights.pt.*}
    [ -z "${WFROM:-}" ] && grep -qsxF "$f" $S/poll.sent && continue
    if [ -f $S/DONE ] || grep -hsF " $n: " $S/events.log $S/side/events.log | grep -qE " piece\(s\), sha256 "; then ws+=($f); fi
  done
  local k=${WFROM:-0} j=${WFROM:-0} used=$(du -sb "$OUT" | cut -f1) max=$(( ${WMAX_MB:-60} * 1048576 )) b
  while [ $j -lt ${#ws[@]} ] && [ $(( j - k )) -lt 6 ]; do
    b=$(stat -c %s "${ws[$j]}"); [ $(( used + b )) -le $max ] || break
    cp "${ws[$j]}" "$OUT"/ && echo "${ws[$j]}" >> $S/poll.sent; used=$(( used + b )); j=$(( j + 1 )); done
  if [ $j = $k ] && [ $k -lt ${#ws[@]} ]; then echo "weights: piece $k ($(stat -c %s "${ws[$k]}") bytes) does not fit WMAX_MB ${WMAX_MB:-60} beside the pack: raise WMAX_MB (at most 64)"
  elif [ ${#ws[@]} -gt 0 ]; then echo "weights: $(( j - k )) piece(s) copied ($(( used / 1048576 )) MiB in all)$( [ $j -lt ${#ws[@]} ] && echo "; $(( ${#ws[@]} - j )) left: call again")"
  fi
}
if [ -f $S/DONE ]; then
  cp $S/pack.tar $S/events.log "$OUT"/ 2>/dev/null; cp $S/comp/cuda_outputs.txt "$OUT"/ 2>/dev/null
  [ -d $S/comp/components ] && cp -r $S/comp/components "$OUT"/
  pieces; ls -la "$OUT"; echo "DONE"
else echo "not done yet ($(( $(date +%s) - t0 )) s waited)"; tail -3 "$LOG" 2>/dev/null
  # the runs that have trained: their records, as the pack will hold them, never while the job packs (pack() reads them then)
  source "$(dirname "$0")/pack_files.sh"
  grep -qs ' all done$' $S/events.log || copy_records $R $S/records trained
  [ -d $S/eval ] && pack_tar "$OUT"/partial.tar $S 2>/dev/null \
    && echo "partial: $(tar -tf "$OUT"/partial.tar | grep -c 'eval.json$') record(s) so far in partial.tar"
  pieces
fi
