/* pcollect.h — the parts of the pcollect command (cmd/pcollect.c and the
 * files of cmd/pcollect/), not a library header. */
#ifndef SP_CMD_PCOLLECT_H
#define SP_CMD_PCOLLECT_H

/* pcollect --snapshot with pcollect's argv; returns the exit status. */
int pcollect_snapshot(int argc, char **argv);

#endif
