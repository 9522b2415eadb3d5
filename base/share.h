/*
 * A share of a count as people read it in a sentence: "12.5%" (three
 * significant digits), and a share that is not zero but below 0.1 % as
 * "< 0.1% (3 of 40960)", so that a few violating groups never read as
 * "0.0%" nor a nearly full share as "100%" ("> 99.9% (40957 of 40960)").
 */
#ifndef SPP_BASE_SHARE_H
#define SPP_BASE_SHARE_H

#include <stddef.h>
#include <stdint.h>

/* part of whole into buf (n bytes); "0%" when whole is 0. Returns buf. */
char *spp_share_text(uint64_t part, uint64_t whole, char *buf, size_t n);

#endif
