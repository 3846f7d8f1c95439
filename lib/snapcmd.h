/* snapcmd.h — `pcollect --snapshot` (the command lives in the library so
 * that pcollect stays one binary with one option table per mode). */
#ifndef SP_SNAPCMD_H
#define SP_SNAPCMD_H

extern const char sp_snapshot_synopsis[];
/* Runs pcollect --snapshot with pcollect's argv; returns the exit status. */
int sp_snapshot_main(int argc, char **argv);

#endif
