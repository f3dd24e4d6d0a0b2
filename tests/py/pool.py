"""multiprocessing pools (fork, then spawn) whose workers multiply with numpy:
every worker process joins the trace (tests/e2e/test_ranks.c)."""
import multiprocessing as mp
import numpy as np

def work(i):
    a = np.ones((64, 32)); b = np.ones((32, 16))
    return float((a @ b).sum()) + i

if __name__ == "__main__":
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as p:
        print(sum(p.map(work, range(8))))
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as p:
        print(sum(p.map(work, range(4))))
