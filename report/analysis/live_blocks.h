/* Live allocations by (owner, address), so that a free recorded without a
 * size (CUPTI's, c10::free_cpu's) gets its allocation's: the device memory
 * (gpu_memory.c), PyTorch's CPU memory (cpu_memory.c) and the Chrome
 * export's [memory] events. */
#ifndef OPP_LIVE_BLOCKS_H
#define OPP_LIVE_BLOCKS_H

#include <stdint.h>

struct opp_live_block;
struct opp_live {
    struct opp_live_block *h; /* NULL: empty */
};

/* Remember the block at (owner, address) with its bytes (a block there
 * whose free was not seen is replaced). 0, or -1 when memory runs out. */
int opp_live_put(struct opp_live *l, uint64_t owner, uint64_t address, int64_t bytes);
/* The bytes of the block at (owner, address), which is then forgotten;
 * *found 0 (and 0 returned) when there is none. */
int64_t opp_live_take(struct opp_live *l, uint64_t owner, uint64_t address, int *found);
void opp_live_free(struct opp_live *l);

#endif
