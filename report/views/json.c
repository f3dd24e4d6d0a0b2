/* The JSON of `opprof report` (see output.h). */
#include <errno.h>
#include <inttypes.h>

#include "views/fmt.h"
#include "views/output.h"

static void json_processes(FILE *f, const struct opp_model *m)
{
    fputs("  \"processes\": [", f);
    for (size_t i = 0; i < m->nprocs; i++) {
        const struct opp_process *p = &m->procs[i];
        fprintf(f, "%s\n    {\"pid\": %" PRIu32 ", \"ppid\": %" PRIu32 ", \"cmdline\": [",
                i ? "," : "", p->pid, p->ppid);
        for (uint32_t k = 0; k < p->argc; k++) {
            if (k)
                fputs(", ", f);
            opp_json_str(f, p->argv[k]);
        }
        fputs("], \"exe\": ", f);
        opp_json_str(f, p->exe);
        fprintf(f, ", \"end\": \"%s\"", opp_process_end_name(p));
        if (p->exit_how == OPP_EXIT_STATUS)
            fprintf(f, ", \"exit_status\": %" PRIu32, p->exit_code);
        else if (p->exit_how == OPP_EXIT_SIGNAL)
            fprintf(f, ", \"signal\": %" PRIu32, p->exit_code);
        fputs(", \"host\": ", f);
        opp_json_str(f, opp_process_info(p, "host"));
        const char *k[] = {"rank", "local_rank", "world_size"};
        const int64_t v[] = {p->rank, p->local_rank, p->world_size};
        for (int j = 0; j < 3; j++)
            if (v[j] < 0)
                fprintf(f, ", \"%s\": null", k[j]);
            else
                fprintf(f, ", \"%s\": %" PRId64, k[j], v[j]);
        fputc('}', f);
    }
    fputs(m->nprocs ? "\n  ],\n" : "],\n", f);
}

static void json_threads(FILE *f, const struct opp_model *m, const uint64_t *events)
{
    fputs("  \"threads\": [", f);
    for (size_t i = 0; i < m->nthreads; i++) {
        const struct opp_thread *t = &m->threads[i];
        fprintf(f, "%s\n    {\"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"name\": ", i ? "," : "",
                opp_thread_process(m, t)->pid, t->tid);
        opp_json_str(f, t->name);
        fprintf(f, ", \"events\": %" PRIu64 ", \"dropped\": %" PRIu64 "}",
                events ? events[i] : (uint64_t)t->nevents, t->dropped);
    }
    fputs(m->nthreads ? "\n  ],\n" : "],\n", f);
}

static void json_gpu(FILE *f, const struct opp_model *m, const struct opp_gpu_stats *s)
{
    if (!s) {
        fputs("  \"gpu\": null,\n", f);
        return;
    }
    fprintf(f, "  \"gpu\": {\n    \"ops\": %" PRIu64 ", \"kernels\": %" PRIu64 ", \"kernel_time\": ",
            s->ops, s->kernels);
    opp_put_us(f, (double)s->kernel_ns);
    fprintf(f, ", \"unattached\": %" PRIu64 ",\n    \"dropped\": {\"cupti\": %" PRIu64
               ", \"opprof\": %" PRIu64 "}, \"cupti_clients_refused\": %" PRIu64
               ", \"cupti_buffers_taken\": %" PRIu64 ", \"cupti_yielded\": %" PRIu64
               ", \"cupti_retaken\": %" PRIu64 ", \"unfinished\": %" PRIu64 ",\n    \"devices\": [",
            m->gpu.unattached, m->gpu.dropped_cupti, m->gpu.dropped_ours, m->gpu.clients_refused,
            m->gpu.buffers_taken, m->gpu.yielded, m->gpu.retaken, m->gpu.unfinished);
    for (size_t i = 0; i < s->ndevs; i++) {
        const struct opp_gpu_dev_stats *d = &s->devs[i];
        fprintf(f, "%s\n      {\"device\": %" PRIu32 ", \"name\": ", i ? "," : "", d->device);
        opp_json_str(f, d->info ? opp_model_str(m, d->info->name) : NULL);
        fprintf(f, ", \"ops\": %" PRIu64 ", \"kernels\": %" PRIu64 ", \"kernel_time\": ", d->ops,
                d->kernels);
        opp_put_us(f, (double)d->kernel_ns);
        fputs(", \"busy_time\": ", f);
        opp_put_us(f, (double)d->busy_ns);
        fputs(", \"span\": ", f);
        opp_put_us(f, (double)(d->last_ns - d->first_ns));
        fprintf(f, ", \"idle_share\": %.4f, ", d->idle_share);
        if (d->has_memory)
            fprintf(f, "\"peak_memory\": %" PRId64 ", \"final_memory\": %" PRId64 "}",
                    d->peak_memory, d->final_memory);
        else
            fputs("\"peak_memory\": null, \"final_memory\": null}", f);
    }
    fputs(s->ndevs ? "\n    ],\n    \"streams\": [" : "],\n    \"streams\": [", f);
    for (size_t i = 0; i < s->nstreams; i++) {
        const struct opp_gpu_stream_stats *st = &s->streams[i];
        fprintf(f,
                "%s\n      {\"pid\": %" PRIu32 ", \"device\": %" PRIu32 ", \"stream\": %" PRIu32
                ", \"ops\": %" PRIu64 ", \"kernels\": %" PRIu64 ", \"kernel_time\": ",
                i ? "," : "", m->procs[st->proc].pid, st->device, st->stream, st->ops, st->kernels);
        opp_put_us(f, (double)st->kernel_ns);
        fputs(", \"busy_time\": ", f);
        opp_put_us(f, (double)st->busy_ns);
        putc('}', f);
    }
    fputs(s->nstreams ? "\n    ]\n  },\n" : "]\n  },\n", f);
}

/* The start of the i-th object of a list: {"key": key, "lib": lib */
static void json_key_lib(FILE *f, size_t i, const char *key, const char *lib)
{
    fprintf(f, "%s\n    {\"key\": ", i ? "," : "");
    opp_json_str(f, key);
    fputs(", \"lib\": ", f);
    opp_json_str(f, lib);
}

/* "errors": calls that did not return success, "statuses": them by entry
 * point and status. */
static void json_statuses(FILE *f, const struct opp_agg *a)
{
    fprintf(f, "  \"errors\": %" PRIu64 ",\n  \"statuses\": [", a->errors);
    for (size_t i = 0; i < a->nstatuses; i++) {
        const struct opp_status_row *s = &a->statuses[i];
        json_key_lib(f, i, s->key, s->lib);
        fprintf(f, ", \"status\": %" PRId64 ", \"name\": ", s->status);
        opp_json_str(f, s->name);
        fprintf(f, ", \"count\": %" PRIu64 "}", s->count);
    }
    fputs(a->nstatuses ? "\n  ]\n" : "]\n", f);
}

static void json_rows(FILE *f, const struct opp_model *m, const struct opp_agg *a,
                      const struct opp_out_opts *o)
{
    fputs("  \"rows\": [", f);
    for (size_t i = 0; i < a->nrows; i++) {
        const struct opp_row *r = &a->rows[i];
        json_key_lib(f, i, r->key, r->lib);
        fprintf(f, ", \"count\": %" PRIu64 ", \"self_cpu_time_total\": ", r->count);
        opp_put_us(f, (double)r->self_cpu_time_total_ns);
        fputs(", \"cpu_time_total\": ", f);
        opp_put_us(f, (double)r->cpu_time_total_ns);
        fputs(", \"cpu_time\": ", f);
        opp_put_us(f, opp_row_avg_ns(r));
        if (o->group_by_shape)
            fprintf(f, ", \"input_shapes\": %s", r->shapes_str); /* already JSON */
        if (o->group_by_stack) { /* outermost first */
            fputs(", \"stack\": [", f);
            for (uint32_t k = r->nstack; k-- > 0;) {
                opp_json_str(f, opp_model_str(m, r->stack[k]));
                if (k)
                    fputs(", ", f);
            }
            putc(']', f);
        }
        fprintf(f, ", \"flops\": %" PRIu64, r->flops);
        if (r->errors) /* calls that did not return success */
            fprintf(f, ", \"errors\": %" PRIu64, r->errors);
        if (r->coll) { /* collectives: bandwidth once GPU time is known */
            fprintf(f, ", \"coll_bytes\": %" PRIu64, r->coll_bytes);
            if (r->cuda_time_total_ns)
                fprintf(f, ", \"algbw_gbps\": %.6f, \"busbw_gbps\": %.6f", opp_row_algbw(r),
                        opp_row_busbw(r));
            else
                fputs(", \"algbw_gbps\": null, \"busbw_gbps\": null", f);
        }
        if (a->gpu) {
            fprintf(f, ", \"device_type\": \"%s\", \"self_cuda_time_total\": ",
                    opp_device_type_name(r->device_type));
            opp_put_us(f, (double)r->self_cuda_time_total_ns);
            fputs(", \"cuda_time_total\": ", f);
            opp_put_us(f, (double)r->cuda_time_total_ns);
            fputs(", \"cuda_time\": ", f);
            opp_put_us(f, opp_row_cuda_avg_ns(r));
            fprintf(f, ", \"self_cuda_memory_usage\": %" PRId64 ", \"cuda_memory_usage\": %" PRId64,
                    r->self_cuda_memory_usage, r->cuda_memory_usage);
            if (r->transfers)
                fprintf(f, ", \"bytes\": %" PRIu64 ", \"gbps\": %.3f", r->bytes, opp_row_gbps(r));
        }
        if (a->cpu_mem)
            fprintf(f, ", \"self_cpu_memory_usage\": %" PRId64 ", \"cpu_memory_usage\": %" PRId64,
                    r->self_cpu_memory_usage, r->cpu_memory_usage);
        putc('}', f);
    }
    fputs(a->nrows ? "\n  ],\n" : "],\n", f);
}

int opp_out_json(FILE *f, const char *path, const struct opp_model *m, const struct opp_agg *a,
                 const struct opp_out_opts *o)
{
    fputs("{\n  \"trace\": ", f);
    opp_json_str(f, path);
    /* complete: every process's calls to its end are in the trace */
    fprintf(f, ",\n  \"complete\": %s,\n  \"processes_cut\": %" PRIu32 ",\n  \"warning\": ",
            m->sum.complete && !m->procs_cut ? "true" : "false", m->procs_cut);
    opp_json_str(f, m->sum.warning[0] ? m->sum.warning : NULL);
    fputs(",\n  \"self_cpu_time_total\": ", f);
    opp_put_us(f, (double)a->self_cpu_time_total_ns);
    fputs(",\n  \"self_cuda_time_total\": ", f);
    opp_put_us(f, (double)a->self_cuda_time_total_ns);
    char note[160];
    fprintf(f, ",\n  \"rows_processes\": %zu, \"rows_note\": ", a->nprocs);
    opp_json_str(f, opp_out_processes_note(a, note, sizeof note) ? note : NULL);
    fputs(",\n", f);
    json_processes(f, m);
    json_threads(f, m, o->thread_events);
    /* open_calls: calls still running when their process died (the text's
     * warning); summary_lost: launches and CPU blocks a summary let go at
     * its maps' bound (the text's warning); dropped: every record lost,
     * then apart by why (a full ring, a signal handler's interruption of
     * our recording, a summary's node bound), which add up to it */
    fprintf(f,
            "  \"events\": %" PRIu64 ",\n  \"dropped\": %" PRIu64 ",\n  \"dropped_full\": %" PRIu64
            ",\n  \"dropped_interrupted\": %" PRIu64 ",\n  \"dropped_node_bound\": %" PRIu64
            ",\n  \"summary_lost\": %" PRIu64 ",\n  \"open_calls\": %" PRIu64 ",\n",
            m->events, m->dropped, opp_model_dropped_full(m), m->interrupted, m->sum_dropped,
            m->gpu.summary_lost, (uint64_t)m->open_events);
    json_gpu(f, m, o->gpu);
    json_rows(f, m, a, o);
    json_statuses(f, a);
    fputs("}\n", f);
    return ferror(f) ? -EIO : 0;
}
