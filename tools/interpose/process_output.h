/* Which process this is, relative to the corealloc command that launched the
 * program, and the file each process writes its results to. */
#ifndef COREALLOC_PROCESS_OUTPUT_H
#define COREALLOC_PROCESS_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

/* The root is the program the command started (and any image it execs):
 * its parent is the corealloc command, whose pid is in COREALLOC_TOOL_PID. */
bool process_is_root(void);

/* Creates a new output file with O_EXCL and returns its descriptor, or -1.
 * A root process first tries BASE itself; every process then tries
 * BASE.<pid>, BASE.<pid>.1, ... so that no process overwrites another's file. */
int process_create_output(const char *base, bool try_base, char *path, size_t path_cap);

/* Reads /proc/self/cmdline (NUL-separated arguments). */
size_t process_read_cmdline(char *buf, size_t cap);

#endif
