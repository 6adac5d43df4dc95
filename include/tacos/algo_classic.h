/**
 * @file algo_classic.h
 * Classic schedule generators (src/algo/), registered in src/algo/registry.c.
 */
#ifndef TACOS_ALGO_CLASSIC_H
#define TACOS_ALGO_CLASSIC_H

#include "tacos/algo.h"

#endif
