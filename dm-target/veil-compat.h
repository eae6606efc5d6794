/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-veil: kernel API differences between the kernels the module builds
 * for (6.1 and later). Each VEIL_HAVE_* comes from a probe of the kernel's
 * own headers in Kbuild, never from the version number: distribution
 * kernels carry backports that a version check gets wrong.
 */
#ifndef DM_VEIL_COMPAT_H
#define DM_VEIL_COMPAT_H

#include <linux/crypto.h>

/* get_unaligned() and friends moved from <asm/> to <linux/> in 6.12. */
#ifdef VEIL_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * An async cipher's completion callback gets the data given to
 * skcipher_request_set_callback() since 6.3; before, the request that
 * holds it. A callback is declared as
 *	static void fn(veil_crypto_done_arg arg, int err)
 * and finds its data with veil_crypto_done_data(arg).
 */
#ifdef VEIL_HAVE_CRYPTO_DONE_DATA
#define veil_crypto_done_arg void *
static inline void *veil_crypto_done_data(void *data)
{
	return data;
}
#else
#define veil_crypto_done_arg struct crypto_async_request *
static inline void *veil_crypto_done_data(struct crypto_async_request *areq)
{
	return areq->data;
}
#endif

#endif /* DM_VEIL_COMPAT_H */
