/* keeper.h — a child process that ends the tracefs uprobes after the
 * tracer has stopped, so that the tracer's stop does not wait for the
 * kernel's grace periods.
 *
 * Why: the last perf event of a tracefs uprobe to close unregisters it and
 * waits for grace periods (trace_uprobe.c: uprobe_unregister_sync, under
 * the kernel's event_mutex, so one probe after the other), and the close
 * of the event a BPF program is attached to waits once more
 * (perf_event_detach_bpf_prog): ~0.1 s per probe here, most of a
 * 200-thread target's stop (0.19-0.27 s).  The target is free as soon as
 * its own events are closed: the kernel takes the breakpoints out of a
 * process once no event on its threads is left (uprobe_perf_close).  So
 * each probe's program is attached to an event on the keeper (the
 * carrier: the keeper never runs the probed code, it waits in recvmsg),
 * the carrier is handed to the keeper at the end (SCM_RIGHTS), and once
 * the tracer has exited (its socket's end) the keeper closes the carriers,
 * paying the grace periods, deletes the tracefs definitions, and exits.
 * The keeper keeps no other file of its parent (its output, the anchors).
 */
#ifndef SP_KEEPER_H
#define SP_KEEPER_H

#include <sys/types.h>

#define SP_KEEPER_MAX 256 /* the most fds (and lines) a keeper takes */

/* Start the keeper: its pid, and the socket to it in *sock; -1 when it
 * cannot be started (the caller closes its events itself).
 * SP_KEEPER_HOLD_MS=N in the environment: the keeper waits N ms more
 * before it closes them (tests/cmd/t6296: the target is free before). */
pid_t sp_keeper_start(int *sock);

/* Hand fd (or -1: none) and a line to append to file once the fds are
 * closed (a tracefs deletion; "" none) to the keeper, at most
 * SP_KEEPER_MAX times.  0, or -1 with errno set (the caller keeps fd and
 * the line). */
int sp_keeper_give(int sock, int fd, const char *file, const char *line);

#endif
