cd /work/main
for r in 1 2; do
 for v in before after; do
  ko=/work/main/build/modules/6.1.0-56-amd64/dm-veil.ko
  [ $v = before ] && ko=/work/base/dm-target/dm-veil.ko
  BENCH_RESULTS=/tmp/ab/$v-$r VEIL_KO=$ko BENCH_CPUS=2 BENCH_WORKLOADS='^(rand-read-4k-qd1|rand-read-64k-qd1|seq-read-1m-qd1)$' bench/run > /tmp/ab/$v-$r.log 2>&1
  echo "$v-$r rc=$? $(date)" >> /tmp/ab/done.log
 done
done
