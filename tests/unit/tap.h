/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tap.h - a minimal Test Anything Protocol producer for the unit tests (run under prove).
 *
 *   plan(n);                      or finish with done_testing() instead
 *   ok(cond, "fmt", ...);         one assertion
 *   is(got, expected, "fmt", ...);  integer equality, "# got/# expected" on mismatch
 *   isnt(got, unexpected, ...);   integer inequality
 *   is_str(got, expected, ...);   string equality (NULL-safe)
 *   todo_start("reason"); ... todo_end();   known failures: reported "# TODO reason"
 *   skip("reason");               an assertion that cannot run here
 *   diag("fmt", ...);             a diagnostic line
 *   return exit_status();         (or done_testing(), which prints the plan first)
 *
 * The exit status is the number of failed, non-TODO assertions (capped at 254), so prove
 * and make see a failing binary even if the TAP output were lost.
 */
#ifndef LV_TAP_H
#define LV_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned int tap_count;	    /* assertions emitted */
static unsigned int tap_failures;   /* failed, not TODO */
static int tap_planned = -1;	    /* -1: no plan yet */
static const char *tap_todo_reason; /* non-NULL: assertions are TODO */

static inline void plan(unsigned int n)
{
	tap_planned = (int)n;
	printf("1..%u\n", n);
	fflush(stdout);
}

static inline void todo_start(const char *reason)
{
	tap_todo_reason = reason;
}

static inline void todo_end(void)
{
	tap_todo_reason = NULL;
}

static inline void tap_vdiag(FILE *f, const char *fmt, va_list ap)
{
	fputs("# ", f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
}

static inline __attribute__((format(printf, 1, 2))) void diag(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	tap_vdiag(stdout, fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* Where failure diagnostics go: stderr, except for TODO tests (Test::More does the same). */
static inline FILE *tap_diag_stream(void)
{
	return tap_todo_reason ? stdout : stderr;
}

static inline int tap_vok(int pass, const char *file, int line, const char *fmt, va_list ap)
{
	char name[512];

	vsnprintf(name, sizeof(name), fmt, ap);
	/* '#' would start a directive: keep names clean. */
	for (char *p = name; *p; p++)
		if (*p == '#' || *p == '\n')
			*p = ' ';
	tap_count++;
	printf("%sok %u - %s", pass ? "" : "not ", tap_count, name);
	if (tap_todo_reason)
		printf(" # TODO %s", tap_todo_reason);
	putchar('\n');
	fflush(stdout);
	if (!pass) {
		FILE *f = tap_diag_stream();

		fprintf(f, "#   Failed %stest '%s'\n#   at %s line %d.\n",
			tap_todo_reason ? "(TODO) " : "", name, file, line);
		fflush(f);
		if (!tap_todo_reason)
			tap_failures++;
	}
	return pass;
}

static inline __attribute__((format(printf, 4, 5))) int tap_ok(int pass, const char *file, int line,
							       const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(pass, file, line, fmt, ap);
	va_end(ap);
	return r;
}

static inline __attribute__((format(printf, 6, 7))) int tap_is(long long got, long long expected,
							       int equal, const char *file,
							       int line, const char *fmt, ...)
{
	int pass = equal ? got == expected : got != expected;
	va_list ap;

	va_start(ap, fmt);
	tap_vok(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass) {
		FILE *f = tap_diag_stream();

		if (equal)
			fprintf(f, "#          got: %lld\n#     expected: %lld\n", got, expected);
		else
			fprintf(f, "#          got: %lld\n#     expected: anything else\n", got);
		fflush(f);
	}
	return pass;
}

static inline __attribute__((format(printf, 5, 6))) int
tap_is_str(const char *got, const char *expected, const char *file, int line, const char *fmt, ...)
{
	int pass = (got && expected) ? strcmp(got, expected) == 0 : got == expected;
	va_list ap;

	va_start(ap, fmt);
	tap_vok(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass) {
		FILE *f = tap_diag_stream();

		fprintf(f, "#          got: %s%s%s\n#     expected: %s%s%s\n", got ? "'" : "",
			got ? got : "NULL", got ? "'" : "", expected ? "'" : "",
			expected ? expected : "NULL", expected ? "'" : "");
		fflush(f);
	}
	return pass;
}

/* Values are compared as long long: unsigned 64-bit values above LLONG_MAX wrap identically
 * on both sides, so equality is still exact. */
#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is(got, expected, ...)                                                                     \
	tap_is((long long)(got), (long long)(expected), 1, __FILE__, __LINE__, __VA_ARGS__)
#define isnt(got, unexpected, ...)                                                                 \
	tap_is((long long)(got), (long long)(unexpected), 0, __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, expected, ...) tap_is_str((got), (expected), __FILE__, __LINE__, __VA_ARGS__)

/* skip - one assertion that was not run, with the reason. */
static inline void skip(const char *reason)
{
	tap_count++;
	printf("ok %u # SKIP %s\n", tap_count, reason);
	fflush(stdout);
}

/* BAIL_OUT - stop the whole run: a precondition of every later test failed. */
static inline __attribute__((noreturn, format(printf, 1, 2))) void BAIL_OUT(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(255);
}

static inline int exit_status(void)
{
	if (tap_planned >= 0 && (unsigned int)tap_planned != tap_count) {
		fprintf(stderr, "# Looks like you planned %d tests but ran %u.\n", tap_planned,
			tap_count);
		return 255;
	}
	if (tap_failures)
		fprintf(stderr, "# Looks like you failed %u test%s of %u.\n", tap_failures,
			tap_failures == 1 ? "" : "s", tap_count);
	return tap_failures > 254 ? 254 : (int)tap_failures;
}

static inline int done_testing(void)
{
	if (tap_planned < 0) {
		printf("1..%u\n", tap_count);
		tap_planned = (int)tap_count;
	}
	fflush(stdout);
	return exit_status();
}

#endif /* LV_TAP_H */
