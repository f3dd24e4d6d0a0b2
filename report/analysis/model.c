/* What a loaded model answers about itself (model.h): a process's labels,
 * how it ended, whether it holds every call. */
#include "analysis/model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *opp_process_info(const struct opp_process *p, const char *key)
{
    for (uint32_t i = 0; i < p->ninfo; i++)
        if (!strcmp(p->info_keys[i], key))
            return p->info_values[i];
    return NULL;
}

const char *opp_process_end_name(const struct opp_process *p)
{
    if (p->exit_how == OPP_EXIT_STATUS)
        return "exited";
    if (p->exit_how == OPP_EXIT_SIGNAL)
        return "killed";
    switch (p->end_how) {
    case OPP_END_EXITED:
        return "exited";
    case OPP_END_LOST:
        return "cut";
    case OPP_END_RUNNING:
        return "running";
    default:
        return "unknown";
    }
}

const char *opp_process_end_text(const struct opp_process *p, char *buf, size_t cap)
{
    if (p->exit_how == OPP_EXIT_STATUS)
        snprintf(buf, cap, "exited with status %" PRIu32, p->exit_code);
    else if (p->exit_how == OPP_EXIT_SIGNAL)
        snprintf(buf, cap, "killed by signal %" PRIu32 " (SIG%s)", p->exit_code,
                 sigabbrev_np((int)p->exit_code) ? sigabbrev_np((int)p->exit_code) : "?");
    else
        snprintf(buf, cap, "%s", opp_process_end_name(p));
    return buf;
}

void opp_summary_refusal(const char *trace, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "%s: this is a summary trace (OPPROF_MODE=summary: calls added up by call path, "
             "without their times); %s needs every call: record without OPPROF_MODE=summary",
             trace, what);
}

/* Whether string id's name matches re, each id tried once (tried[id]). */
static int id_matches(const struct opp_model *m, const regex_t *re, uint8_t *tried, uint32_t id)
{
    if (id >= m->nstrs || tried[id])
        return 0;
    tried[id] = 1;
    return regexec(re, m->strs[id], 0, NULL, 0) == 0;
}

/* Whether a call's or GPU op's name matches re: 1, 0, or -1 out of memory. */
static int name_matched(const struct opp_model *m, const regex_t *re)
{
    uint8_t *tried = calloc(m->nstrs ? m->nstrs : 1, 1);
    if (!tried)
        return -1;
    int found = 0;
    for (size_t t = 0; t < m->nthreads && !found; t++)
        for (size_t k = 0; k < m->threads[t].nevents && !found; k++)
            found = id_matches(m, re, tried, m->threads[t].events[k].name);
    for (size_t i = 0; i < m->gpu.nops && !found; i++)
        found = id_matches(m, re, tried, m->gpu.ops[i].name);
    free(tried);
    return found;
}

int opp_model_filters_known(const struct opp_model *m, const struct opp_agg_filter_names *f,
                            char *err, size_t errlen)
{
    if (f->lib) {
        int found = 0;
        uint32_t seen[64], nseen = 0; /* string ids of the libraries named so far */
        size_t len = 0;
        char known[400] = "";
        for (size_t p = 0; p < m->nprocs; p++)
            for (uint32_t i = 0; i < m->procs[p].nfuncs; i++) {
                uint32_t id = m->procs[p].funcs[i].lib;
                const char *lib = opp_model_str(m, id);
                found |= !strcmp(lib, f->lib);
                uint32_t k = 0;
                while (k < nseen && seen[k] != id)
                    k++;
                if (k < nseen || !lib[0] || nseen == 64 || len + strlen(lib) + 3 >= sizeof known)
                    continue;
                seen[nseen++] = id;
                len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", len ? ", " : "",
                                        lib);
            }
        if (!found) {
            snprintf(err, errlen,
                     "--lib %s: no such library among those the trace's processes could call "
                     "(%s)",
                     f->lib, len ? known : "none");
            return -1;
        }
    }
    if (f->filter_pid) {
        int found = 0;
        for (size_t p = 0; p < m->nprocs && !found; p++)
            found = m->procs[p].pid == f->pid;
        if (!found) {
            snprintf(err, errlen, "--pid %u: no process with that pid in the trace", f->pid);
            return -1;
        }
    }
    if (f->filter_tid) {
        int found = 0;
        for (size_t t = 0; t < m->nthreads && !found; t++)
            found = m->threads[t].tid == f->tid;
        if (!found) {
            snprintf(err, errlen, "--tid %u: no thread with that tid in the trace", f->tid);
            return -1;
        }
        found = !f->filter_pid; /* and with --pid, one of its threads */
        for (size_t t = 0; t < m->nthreads && !found; t++)
            found = m->threads[t].tid == f->tid && m->procs[m->threads[t].proc].pid == f->pid;
        if (!found) {
            snprintf(err, errlen, "--tid %u: not a thread of --pid %u", f->tid, f->pid);
            return -1;
        }
    }
    if (f->filter_rank) {
        int found = 0, of_pid = !f->filter_pid;
        for (size_t p = 0; p < m->nprocs; p++) {
            found |= m->procs[p].rank == f->rank;
            of_pid |= m->procs[p].rank == f->rank && m->procs[p].pid == f->pid;
        }
        if (!found) {
            snprintf(err, errlen, "--rank %" PRId64 ": no process of the trace has that rank",
                     f->rank);
            return -1;
        }
        if (!of_pid) {
            snprintf(err, errlen, "--pid %u --rank %" PRId64 ": process %u is not rank %" PRId64,
                     f->pid, f->rank, f->pid, f->rank);
            return -1;
        }
    }
    if (f->match) {
        int found = name_matched(m, f->match);
        if (found < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (!found) {
            snprintf(err, errlen, "--match '%s': no operator or kernel name in the trace matches "
                     "(the table without --match lists them)", f->match_text);
            return -1;
        }
    }
    return 0;
}
