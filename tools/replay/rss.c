#include "rss.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Plain read(2) into a stack buffer: stdio would allocate from the
 * allocator being measured. */
static uint64_t field_kib(const char *status, const char *name)
{
    const char *at = strstr(status, name);
    return at == NULL ? 0 : strtoull(at + strlen(name), NULL, 10);
}

bool rss_read(struct rss_sample *out)
{
    char status[8192];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t len = read(fd, status, sizeof status - 1);
    close(fd);
    if (len <= 0)
        return false;
    status[len] = '\0';
    out->current_bytes = field_kib(status, "VmRSS:") * 1024;
    out->peak_bytes = field_kib(status, "VmHWM:") * 1024;
    return true;
}

bool rss_reset_peak(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok;
}
