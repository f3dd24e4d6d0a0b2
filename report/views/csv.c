/* The CSV of `opprof report` (see output.h). */
#include <errno.h>
#include <inttypes.h>

#include "views/fmt.h"
#include "views/output.h"

int opp_out_csv(FILE *f, const struct opp_agg *a, const struct opp_out_opts *o)
{
    fprintf(
        f, "key,lib,count,self_cpu_time_total_us,cpu_time_total_us,cpu_time_avg_us,%s%sflops%s%s\n",
        o->group_by_shape ? "input_shapes," : "", o->group_by_stack ? "stack," : "",
        a->gpu ? ",device_type,self_cuda_time_total_us,cuda_time_total_us,cuda_time_avg_us,"
                 "self_cuda_memory_usage,cuda_memory_usage,bytes,gbps"
               : "",
        a->cpu_mem ? ",self_cpu_memory_usage,cpu_memory_usage" : "");
    for (size_t i = 0; i < a->nrows; i++) {
        const struct opp_row *r = &a->rows[i];
        opp_csv_field(f, r->key, 0);
        putc(',', f);
        opp_csv_field(f, r->lib, 0);
        fprintf(f, ",%" PRIu64 ",", r->count);
        opp_put_us(f, (double)r->self_cpu_time_total_ns);
        putc(',', f);
        opp_put_us(f, (double)r->cpu_time_total_ns);
        putc(',', f);
        opp_put_us(f, opp_row_avg_ns(r));
        putc(',', f);
        if (o->group_by_shape) {
            opp_csv_field(f, r->shapes_str, 1);
            putc(',', f);
        }
        if (o->group_by_stack) {
            opp_csv_field(f, r->stack_str ? r->stack_str : "", 0);
            putc(',', f);
        }
        fprintf(f, "%" PRIu64, r->flops);
        if (a->gpu) {
            fprintf(f, ",%s,", opp_device_type_name(r->device_type));
            opp_put_us(f, (double)r->self_cuda_time_total_ns);
            putc(',', f);
            opp_put_us(f, (double)r->cuda_time_total_ns);
            putc(',', f);
            opp_put_us(f, opp_row_cuda_avg_ns(r));
            fprintf(f, ",%" PRId64 ",%" PRId64 ",", r->self_cuda_memory_usage,
                    r->cuda_memory_usage);
            if (r->transfers)
                fprintf(f, "%" PRIu64 ",%.3f", r->bytes, opp_row_gbps(r));
            else
                putc(',', f);
        }
        if (a->cpu_mem)
            fprintf(f, ",%" PRId64 ",%" PRId64, r->self_cpu_memory_usage, r->cpu_memory_usage);
        putc('\n', f);
    }
    return ferror(f) ? -EIO : 0;
}
