/* A hang turned into a failure: when `seconds` pass before the next
 * watchdog_arm (or watchdog_stop), the process writes what it was doing to
 * stderr and exits with WATCHDOG_STATUS. Async-signal-safe (a signal
 * handler may re-arm it), and a forked child inherits it armed. */
#ifndef COREALLOC_TEST_WATCHDOG_H
#define COREALLOC_TEST_WATCHDOG_H

#define WATCHDOG_STATUS 124 /* as timeout(1) */

/* what: a string that outlives the watch; step: a number that tells where. */
void watchdog_arm(unsigned seconds, const char *what, long step);
void watchdog_stop(void);

#endif
