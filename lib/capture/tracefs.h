/* tracefs.h — a uprobe defined once in tracefs (uprobe_events), for many
 * perf events to share.
 *
 * Why: a perf event of the uprobe PMU (type from /sys/bus/event_source/
 * devices/uprobe) makes a uprobe of its own, and closing it unregisters
 * that uprobe and waits for a grace period (kernel/trace/trace_event_perf.c:
 * perf_uprobe_destroy, under the kernel's event_mutex, so closes from
 * several threads wait one after the other): ~80 ms per event here, 66 s
 * for a 200-thread target.  Perf events of type PERF_TYPE_TRACEPOINT on a
 * tracefs uprobe share that one uprobe: only the last close waits.  The
 * kernel's filter is the same (a per-thread event traps its process only).
 *
 * Events are named stackpipe_PID/pN (PID: this process); those a killed
 * pcollect left behind are removed at the next definition.  Root only
 * (tracefs is writable by root); mounted at /sys/kernel/tracing when it
 * is nowhere, and unmounted again when the last event is deleted.
 */
#ifndef SP_TRACEFS_H
#define SP_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

/* Define a uprobe (ret: a return probe) at file offset `offset` of path.
 * Returns the event's tracepoint id (perf_event_attr.config with type
 * PERF_TYPE_TRACEPOINT) and its name in name[nname], or -1 when tracefs
 * cannot be used here (not root, no tracefs, a path tracefs cannot
 * parse): the caller uses the uprobe PMU instead. */
int sp_tracefs_uprobe_new(const char *path, uint64_t offset, int ret, char *name, size_t nname);

/* Delete an event sp_tracefs_uprobe_new made, once no perf event uses it. */
void sp_tracefs_uprobe_del(const char *name);

/* Hand the deletion of name to another process (one that outlives this
 * one's last use of it): the file to append to and the line to append, in
 * file[nfile] and line[nline]; this process forgets the event.  Returns
 * -1 when the tracefs was mounted by this process (it unmounts it at its
 * last deletion, so it deletes its events itself). */
int sp_tracefs_uprobe_handoff(const char *name, char *file, size_t nfile, char *line, size_t nline);

#endif
