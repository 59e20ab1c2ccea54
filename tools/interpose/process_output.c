#include "process_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "raw_io.h"

bool process_is_root(void)
{
    const char *tool_pid = getenv("COREALLOC_TOOL_PID");
    if (tool_pid == NULL)
        return true;
    return strtoll(tool_pid, NULL, 10) == (long long)getppid();
}

static int create_exclusive(const char *path)
{
    int fd;
    do {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

int process_create_output(const char *base, bool try_base, char *path, size_t path_cap)
{
    struct raw_text text = { path, path_cap, 0 };
    if (try_base) {
        raw_text_str(&text, base);
        int fd = create_exclusive(path);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    for (unsigned attempt = 0; attempt < 1000; attempt++) {
        text.len = 0;
        raw_text_str(&text, base);
        raw_text_str(&text, ".");
        raw_text_u64(&text, (uint64_t)getpid());
        if (attempt > 0) {
            raw_text_str(&text, ".");
            raw_text_u64(&text, attempt);
        }
        int fd = create_exclusive(path);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

size_t process_read_cmdline(char *buf, size_t cap)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t len = 0;
    while (len < cap) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    return len;
}
