/* Live allocations by (owner, address) (see live_blocks.h). */
#include "analysis/live_blocks.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/loader.h"

struct opp_live_block {
    uint64_t key[2]; /* owner, address */
    int64_t bytes;
    UT_hash_handle hh;
};

int opp_live_put(struct opp_live *l, uint64_t owner, uint64_t address, int64_t bytes)
{
    uint64_t key[2] = {owner, address};
    struct opp_live_block *b;
    HASH_FIND(hh, l->h, key, sizeof key, b);
    if (!b) {
        if (!(b = malloc(sizeof *b)))
            return -1;
        memcpy(b->key, key, sizeof key);
        if (OPP_HASH_ADD(l->h, key, sizeof b->key, b)) {
            free(b);
            return -1;
        }
    }
    b->bytes = bytes;
    return 0;
}

int64_t opp_live_take(struct opp_live *l, uint64_t owner, uint64_t address, int *found)
{
    uint64_t key[2] = {owner, address};
    struct opp_live_block *b;
    HASH_FIND(hh, l->h, key, sizeof key, b);
    *found = b != NULL;
    if (!b)
        return 0;
    int64_t bytes = b->bytes;
    HASH_DEL(l->h, b);
    free(b);
    return bytes;
}

void opp_live_free(struct opp_live *l)
{
    OPP_HASH_FREE(l->h);
}
