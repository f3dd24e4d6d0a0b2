"""opprof analyze: many traces (one per rank or host) summarised in parallel
on Dask, one task per trace, and merged: operators over all ranks, per-rank
step time and stragglers with the operators that make them slow, per-rank
GPU time (compute, communication, copies, idle) and communication/compute
overlap, launch delays. Each task reads what `opprof report` and `opprof
export sqlite` compute, so the numbers are the C tool's."""
