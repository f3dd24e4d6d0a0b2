/* Calls NCCL with known counts and prints each returned status. Without a
 * GPU the communicator cannot be created: the collectives get a NULL
 * communicator and fail, with their arguments recorded. */
#include <nccl.h>
#include <stdio.h>

#define SHOW(name, call) printf("%s %d\n", name, (int)(call))

int main(void)
{
    ncclUniqueId id = {{0}};
    ncclComm_t comm = NULL;
    int rank = -1, n = -1;
    SHOW("ncclGetUniqueId", ncclGetUniqueId(&id));
    SHOW("ncclCommInitRank", ncclCommInitRank(&comm, 4, id, 2));
    printf("comm %s\n", comm ? "set" : "null");
    SHOW("ncclCommUserRank", ncclCommUserRank(comm, &rank));
    SHOW("ncclCommCount", ncclCommCount(comm, &n));
    float buf[16];
    SHOW("ncclGroupStart", ncclGroupStart());
    for (int i = 0; i < 2; i++)
        SHOW("ncclAllReduce", ncclAllReduce(buf, buf, 1 << 20, ncclFloat32, ncclSum, comm, NULL));
    SHOW("ncclBroadcast", ncclBroadcast(buf, buf, 1000, ncclFloat64, 1, comm, NULL));
    SHOW("ncclReduce", ncclReduce(buf, buf, 3000, ncclBfloat16, ncclMax, 3, comm, NULL));
    SHOW("ncclAllGather", ncclAllGather(buf, buf, 4096, ncclInt32, comm, NULL));
    SHOW("ncclReduceScatter", ncclReduceScatter(buf, buf, 512, ncclFloat16, ncclAvg, comm, NULL));
    SHOW("ncclAlltoAll", ncclAlltoAll(buf, buf, 256, ncclInt8, comm, NULL));
    SHOW("ncclSend", ncclSend(buf, 100, ncclFloat32, 1, comm, NULL));
    SHOW("ncclRecv", ncclRecv(buf, 200, ncclInt64, 3, comm, NULL));
    SHOW("ncclGroupEnd", ncclGroupEnd());
    SHOW("ncclCommDestroy", ncclCommDestroy(comm));
    return 0;
}
