// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lv_check() must be able to fail: every other test relies on "lv_check passes" meaning
 * something. A healthy machine cannot be corrupted through the public API, so this one test
 * flips folio flag bits with the internal helpers (src/ headers, which unit tests use only
 * where no public call can set the scene), checks that lv_check reports -EUCLEAN with a
 * description, and restores them.
 */
#include "internal.h"

#include "lvtest.h"

static int check_quiet(struct lv_machine *m, char **report)
{
	size_t len = 0;
	FILE *f = open_memstream(report, &len);
	int rc = lv_check(m, f);

	fclose(f);
	return rc;
}

int main(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	char *report = NULL;

	lv_folio_add_lru(f);
	lv_lru_add_drain_all(m);
	is(check_quiet(m, &report), 0, "healthy machine: lv_check -> 0");
	is(strlen(report), 0, "healthy machine: empty report");
	free(report);

	/* On the inactive file list, but its flags now select the active one. */
	folio_set(f, PG_active);
	is(check_quiet(m, &report), -EUCLEAN, "folio on the wrong list: lv_check -> -EUCLEAN");
	ok(strstr(report, "lv_check") != NULL, "the violation is described");
	diag("report: %.*s", (int)strcspn(report, "\n"), report);
	free(report);
	folio_clear(f, PG_active);
	is(check_quiet(m, &report), 0, "restored: lv_check -> 0");
	free(report);

	/* Linked without PG_lru. */
	folio_clear(f, PG_lru);
	is(check_quiet(m, &report), -EUCLEAN, "linked folio without PG_lru: lv_check -> -EUCLEAN");
	ok(strlen(report) > 0, "the violation is described");
	free(report);
	folio_set(f, PG_lru);

	is(lv_bug_count(m), 0, "lv_check reports, it does not count run-time bugs");
	lv_folio_put(f);
	finish(m, "check machine");
	return done_testing();
}
