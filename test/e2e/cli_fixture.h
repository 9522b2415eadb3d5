/*
 * Shared by the end-to-end tests (test_cli*.c): running the binary with a
 * literal argument list, and the tests test_cli_options.c holds for
 * test_cli.c's list.
 */
#ifndef SPP_TEST_E2E_CLI_FIXTURE_H
#define SPP_TEST_E2E_CLI_FIXTURE_H

#include "test/harness.h"

#define RUN(r, ...)                                                            \
	do {                                                                   \
		const char *args_[] = {__VA_ARGS__, NULL};                     \
		assert_int_equal(harness_spprof((r), args_), 0);               \
	} while (0)

/*
 * Run args under a 20 s alarm (a hang, as on a FIFO, kills the test, not
 * the suite); it must exit 2 with one line on stderr holding want and
 * nothing on stdout.
 */
void cli_refused(const char *const *args, const char *want);

/* A one-layer 64x64 model at model and its static JSON report at report. */
void cli_model_and_report(const char *model, const char *report);

void test_help_names_every_format(void **state);
void test_help_lists_what_parses(void **state);
void test_unknown_option(void **state);
void test_option_limits(void **state);
void test_session_group(void **state);
void test_fifo_inputs(void **state);
void test_foreign_formats(void **state);
void test_embedding_names(void **state);
void test_readme_agrees_with_help(void **state);
void test_hostile_names(void **state);
void test_resource_budget(void **state);
void test_output_targets(void **state);
void test_output_readonly_dir(void **state);
void test_output_signal(void **state);

#endif
