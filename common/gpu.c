/* GPU activity record encoding (gpu.h). */
#include "gpu.h"

#include <string.h>

int opp_gpu_put(struct opp_wbuf *w, const struct opp_gpu_rec *r)
{
    size_t mark = w->len;
    uint32_t n = r->nfields > OPP_GPU_FIELDS_MAX ? OPP_GPU_FIELDS_MAX : r->nfields;
    opp_put_varint(w, r->type);
    if (r->type == OPP_GPU_STRING) {
        opp_put_varint(w, r->f[0]);
        uint32_t len = r->slen > OPP_NAME_STR_MAX ? OPP_NAME_STR_MAX : r->slen;
        opp_put_str(w, r->str, len);
    } else {
        opp_put_varint(w, n);
        for (uint32_t i = 0; i < n; i++)
            opp_put_varint(w, r->f[i]);
    }
    if (w->overflow) {
        w->len = mark;
        w->overflow = 0;
        return -1;
    }
    return 0;
}

int opp_gpu_get(struct opp_rbuf *r, struct opp_gpu_rec *out, const char **why)
{
    memset(out, 0, sizeof *out);
    uint64_t type = opp_get_varint(r);
    if (r->bad || type == 0 || type > UINT32_MAX) {
        *why = "bad GPU record type";
        return -1;
    }
    out->type = (uint32_t)type;
    if (type == OPP_GPU_STRING) {
        out->f[0] = opp_get_varint(r);
        out->nfields = 1;
        size_t n = 0;
        out->str = opp_get_str(r, OPP_NAME_STR_MAX, &n);
        out->slen = (uint32_t)n;
        if (r->bad || !out->str || out->f[0] > UINT32_MAX) {
            *why = "bad GPU string record";
            return -1;
        }
        return 0;
    }
    uint64_t n = opp_get_varint(r);
    if (r->bad || n > 255) {
        *why = "bad GPU record field count";
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = opp_get_varint(r);
        if (i < OPP_GPU_FIELDS_MAX)
            out->f[i] = v;
    }
    out->nfields = n > OPP_GPU_FIELDS_MAX ? OPP_GPU_FIELDS_MAX : (uint32_t)n;
    if (r->bad) {
        *why = "GPU record cut short";
        return -1;
    }
    return 0;
}

int opp_gpu_check(const void *p, uint32_t size, uint32_t *count, const char **why)
{
    struct opp_rbuf r;
    opp_rbuf_init(&r, p, size);
    uint32_t n = opp_get_u32(&r);
    if (r.bad) {
        *why = "GPU records without a count";
        return -1;
    }
    struct opp_gpu_rec rec;
    for (uint32_t i = 0; i < n; i++)
        if (opp_gpu_get(&r, &rec, why))
            return -1;
    if (opp_rbuf_left(&r)) {
        *why = "bytes after the GPU records";
        return -1;
    }
    *count = n;
    return 0;
}
