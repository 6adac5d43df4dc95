/* tacos-run --calibrate (calibrate.c): measure alpha and beta per link class over the ranks of the job
 * and write a cost file (man 5 tacosc-costs). */
#ifndef TACOS_EXEC_CALIBRATE_H
#define TACOS_EXEC_CALIBRATE_H

/** Run the calibration: argv[1] is "--calibrate".  Initialises and finalises MPI itself; returns the
 *  exit status (0 success, 1 failure, 2 usage error). */
int tc_exec_calibrate_main(int argc, char **argv);

#endif
