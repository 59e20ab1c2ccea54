/* Resident memory of this process, from /proc/self/status. */
#ifndef COREALLOC_REPLAY_RSS_H
#define COREALLOC_REPLAY_RSS_H

#include <stdbool.h>
#include <stdint.h>

struct rss_sample {
    uint64_t current_bytes; /* VmRSS */
    uint64_t peak_bytes;    /* VmHWM */
};

bool rss_read(struct rss_sample *out);
/* Sets the peak back to the current RSS (clear_refs "5"); false if refused. */
bool rss_reset_peak(void);

#endif
