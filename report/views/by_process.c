/* `opprof report --by-process`: which process a job's time went to. */
#include "views/by_process.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "views/columns.h"
#include "views/fmt.h"

enum { C_PID, C_CMD, C_CALLS, C_TOTAL, C_SHARE, C_END, C_N };

/* The process's arguments joined by spaces (its exe when it has none). */
static const char *command(const struct opp_process *p, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (uint32_t k = 0; k < p->argc && len + 1 < cap; k++) {
        int w = snprintf(buf + len, cap - len, "%s%s", k ? " " : "", p->argv[k]);
        len += w > 0 ? (size_t)w : 0;
    }
    return p->argc ? buf : p->exe;
}

static void out_json(FILE *f, const struct opp_model *m, const struct opp_agg *a)
{
    fputs("{\n  \"processes\": [", f);
    char end[64];
    for (size_t i = 0; i < a->nprocs; i++) {
        const struct opp_agg_proc *ap = &a->procs[i];
        const struct opp_process *p = &m->procs[ap->proc];
        fprintf(f, "%s\n    {\"pid\": %" PRIu32 ", \"cmdline\": [", i ? "," : "", p->pid);
        for (uint32_t k = 0; k < p->argc; k++) {
            if (k)
                fputs(", ", f);
            opp_json_str(f, p->argv[k]);
        }
        fprintf(f, "], \"calls\": %" PRIu64 ", \"cpu_time_total\": ", ap->calls);
        opp_put_us(f, (double)ap->cpu_ns);
        fprintf(f, ", \"gpu_ops\": %" PRIu64 ", \"end\": ", ap->gpu_ops);
        opp_json_str(f, opp_process_end_text(p, end, sizeof end));
        fputc('}', f);
    }
    fputs(a->nprocs ? "\n  ],\n  \"cpu_time_total\": " : "],\n  \"cpu_time_total\": ", f);
    opp_put_us(f, (double)a->self_cpu_time_total_ns);
    fputs("\n}\n", f);
}

static void out_text(FILE *f, const struct opp_model *m, const struct opp_agg *a)
{
    char cells[C_N][OPP_NAME_MAX_WIDTH + 1], cmd[4096], cut[OPP_NAME_MAX_WIDTH + 1];
    const char *head[C_N] = {"PID", "Command", "# of Calls", "CPU total", "CPU total %", "End"};
    int width[C_N], on[C_N];
    for (int c = 0; c < C_N; c++) {
        width[c] = c == C_CMD || c == C_END ? (int)strlen(head[c]) : OPP_COLUMN_WIDTH;
        on[c] = 1;
    }
    /* Command and End as wide as their longest + 4, like torch's Name */
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            opp_col_sep(f, C_N, width, on);
            opp_col_line(f, C_N, width, on, head);
            opp_col_sep(f, C_N, width, on);
        }
        for (size_t i = 0; i < a->nprocs; i++) {
            const struct opp_agg_proc *ap = &a->procs[i];
            const struct opp_process *p = &m->procs[ap->proc];
            snprintf(cells[C_PID], sizeof cells[C_PID], "%" PRIu32, p->pid);
            snprintf(cells[C_CMD], sizeof cells[C_CMD], "%s",
                     opp_cut_name(command(p, cmd, sizeof cmd), cut));
            snprintf(cells[C_CALLS], sizeof cells[C_CALLS], "%" PRIu64, ap->calls);
            opp_fmt_time(cells[C_TOTAL], (double)ap->cpu_ns);
            opp_fmt_percent(cells[C_SHARE], (double)ap->cpu_ns, (double)a->self_cpu_time_total_ns);
            opp_process_end_text(p, cells[C_END], sizeof cells[C_END]);
            if (!pass) {
                width[C_CMD] = opp_imax(width[C_CMD], (int)strlen(cells[C_CMD]) + 4);
                width[C_END] = opp_imax(width[C_END], (int)strlen(cells[C_END]) + 4);
                continue;
            }
            const char *line[C_N];
            for (int c = 0; c < C_N; c++)
                line[c] = cells[c];
            opp_col_line(f, C_N, width, on, line);
        }
    }
    opp_col_sep(f, C_N, width, on);
    char buf[OPP_FMT_MAX];
    fprintf(f, "CPU time total: %s (%zu process%s)\n",
            opp_fmt_time(buf, (double)a->self_cpu_time_total_ns), a->nprocs,
            a->nprocs == 1 ? "" : "es");
}

int opp_out_by_process(FILE *f, const struct opp_model *m, const struct opp_agg *a, int json)
{
    if (json)
        out_json(f, m, a);
    else
        out_text(f, m, a);
    return ferror(f) ? -EIO : 0;
}
