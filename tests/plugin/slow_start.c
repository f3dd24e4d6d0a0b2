/* A library whose constructor takes 400 ms, preloaded after libopprof.so:
 * ld.so runs it before the preload's (a later object's constructor
 * first), as a program's own libraries' static constructors run before
 * the preload connects (life's exec_of_a_slow_starting_program). */
#include <time.h>

__attribute__((constructor)) static void slow_start(void)
{
    struct timespec d = {0, 400 * 1000000L};
    while (nanosleep(&d, &d))
        ;
}
