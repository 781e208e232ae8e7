/* Shared by the C tests: counted checks and the summary line. */
#ifndef DLPACK_ABI_TEST_CHECK_H
#define DLPACK_ABI_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int failures = 0;
static int checks = 0;

static inline void check(const char* name, int ok) {
  checks++;
  if (!ok) {
    failures++;
    printf("FAIL %s\n", name);
  }
}

/* A check that prints the expected and actual strings on failure. */
static inline void check_str(const char* name, const char* actual, const char* expected) {
  int ok = actual != NULL && strcmp(actual, expected) == 0;
  check(name, ok);
  if (!ok) printf("  expected \"%s\", got \"%s\"\n", expected, actual ? actual : "(null)");
}

/* Prints "<test>: N passed, M failed"; the exit status. */
static inline int summary(const char* test) {
  printf("%s: %d passed, %d failed\n", test, checks - failures, failures);
  return failures == 0 ? 0 : 1;
}

#endif
