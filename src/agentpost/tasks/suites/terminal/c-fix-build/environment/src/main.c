#include <stdio.h>
#include "stats.h"

int main(void) {
    double xs[1024];
    int n = 0;
    while (n < 1024 && scanf("%lf", &xs[n]) == 1) n++;
    if (n == 0) { fprintf(stderr, "no input\n"); return 1; }
    printf("mean %.3f\nstddev %.3f\n", mean(xs, n), stddev(xs, n));
    return 0;
}
