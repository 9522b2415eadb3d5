/*
 * The CI-facing subcommands, compare and check (docs/CHECK.md), declared
 * apart from cmd.h so that they can be added to the table in main.c
 * without touching the shared header.
 */
#ifndef SPP_CMD_CMD_GATE_H
#define SPP_CMD_CMD_GATE_H

int cmd_compare(int argc, char **argv);
int cmd_check(int argc, char **argv);

struct cmd_help;

extern const struct cmd_help cmd_compare_help;
extern const struct cmd_help cmd_check_help;

#endif
