/* The agent's CUPTI client (cupti.c): API calls through CUPTI callbacks and
 * GPU activity through activity buffers, on one clock. Everything is a no-op
 * in builds without the CUDA toolkit. */
#ifndef OPP_CUPTI_CLIENT_H
#define OPP_CUPTI_CLIENT_H

/* Set up what the process needs before the program runs: try CUPTI now when
 * CUDA is already loaded, else ask the driver to call us at its start
 * (CUDA_INJECTION64_PATH). */
void opp_cupti_start(const char *self_path);
/* Try CUPTI once (later calls return at once). 1 when CUPTI serves. Called
 * from the constructor when CUDA is already loaded, from the driver's
 * InitializeInjection, and after each outermost CUDA call the symbol fallback
 * recorded (static cudart, where neither of the others happens): cheap once
 * tried. */
int opp_cupti_init(void);
/* Hand over every GPU record CUPTI holds (exit, signals). */
void opp_cupti_flush(void);
/* The child of fork(): CUPTI and its buffers belong to the parent. */
void opp_cupti_forked(void);

/* Provided by agent.c for the CUPTI client. */
int opp_agent_send(unsigned type, const void *payload, unsigned size); /* 0 or -errno */
void opp_agent_say(const char *a, const char *b, const char *c);      /* one line on stderr */

#endif
