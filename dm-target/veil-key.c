// SPDX-License-Identifier: GPL-2.0
/*
 * dm-veil keys: hex keys from the table line and logon/user keys from the
 * kernel keyring, loading them into the cipher, wiping them.
 *
 * A key given as ":<size>:<type>:<description>" never appears in the
 * table; status prints the reference back instead of the bytes. Every
 * buffer that held key bytes is wiped before it is freed, and the hex text
 * of the table line or message is overwritten once it is decoded.
 */
#include <linux/key.h>
#include <linux/kernel.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <keys/encrypted-type.h>
#include <keys/trusted-type.h>
#include <keys/user-type.h>

#include "dm-veil.h"
#include "veil-integrity.h"
#include "veil-key.h"
#include "veil-masks.h"

/**
 * veil_key_free() - wipe and free a key
 * @key: the key; left empty and invalid.
 */
void veil_key_free(struct veil_key *key)
{
	kfree_sensitive(key->bytes);
	kfree(key->ref);
	key->bytes = NULL;
	key->ref = NULL;
	key->size = 0;
	key->valid = false;
}

static int veil_key_from_hex(struct veil_key *key, char *hex,
			     char **error)
{
	size_t len = strlen(hex);
	int ret = 0;

	/* "-": no key, as dm-crypt takes it for cipher_null. */
	if (!strcmp(hex, "-"))
		return 0;
	if (!len) {
		*error = "Cipher needs a key";
		return -EINVAL;
	}
	if (len & 1) {
		*error = "Odd number of hex digits in key";
		ret = -EINVAL;
		goto wipe;
	}
	if (len / 2 > VEIL_MAX_KEY_SIZE) {
		*error = "Key too long";
		ret = -EINVAL;
		goto wipe;
	}

	key->size = len / 2;
	key->bytes = kmalloc(key->size, GFP_KERNEL);
	if (!key->bytes) {
		*error = "Cannot allocate key";
		ret = -ENOMEM;
		goto wipe;
	}
	if (hex2bin(key->bytes, hex, key->size)) {
		*error = "Key is not hexadecimal";
		ret = -EINVAL;
	}
wipe:
	memset(hex, '0', len);
	return ret;
}

/*
 * The key bytes of @src and their length: a logon or user key's payload,
 * an encrypted key's decrypted data, a trusted key's key; NULL once the
 * key is revoked. Called with src->sem held.
 */
static const u8 *veil_key_payload(struct key *src, unsigned int *len)
{
	const struct user_key_payload *user;
	const struct encrypted_key_payload *enc;
	const struct trusted_key_payload *trusted;

	if (IS_ENABLED(CONFIG_ENCRYPTED_KEYS) &&
	    src->type == &key_type_encrypted) {
		enc = src->payload.data[0];
		*len = enc ? enc->decrypted_datalen : 0;
		return enc ? enc->decrypted_data : NULL;
	}
	if (IS_ENABLED(CONFIG_TRUSTED_KEYS) &&
	    src->type == &key_type_trusted) {
		trusted = src->payload.data[0];
		*len = trusted ? trusted->key_len : 0;
		return trusted ? trusted->key : NULL;
	}
	user = user_key_payload_locked(src);
	*len = user ? user->datalen : 0;
	return user ? user->data : NULL;
}

/* Copy the key bytes of a keyring key; called with key->sem held. */
static int veil_key_copy_payload(struct veil_key *dst, struct key *src,
				 char **error)
{
	unsigned int len;
	const u8 *bytes = veil_key_payload(src, &len);

	if (!bytes) {
		*error = "Keyring key revoked";
		return -EKEYREVOKED;
	}
	if (len != dst->size) {
		*error = "Keyring key size does not match the table";
		return -EINVAL;
	}
	dst->bytes = kmemdup(bytes, dst->size, GFP_KERNEL);
	if (!dst->bytes) {
		*error = "Cannot allocate key";
		return -ENOMEM;
	}
	return 0;
}

static int veil_key_from_keyring(struct veil_key *key, const char *str,
				 char **error)
{
	char *buf, *p, *size, *type_name;
	struct key_type *type;
	struct key *kr;
	int ret = -EINVAL;

	buf = kstrdup(str + 1, GFP_KERNEL);
	if (!buf) {
		*error = "Cannot allocate key";
		return -ENOMEM;
	}
	p = buf;
	size = strsep(&p, ":");
	type_name = strsep(&p, ":");
	if (kstrtouint(size, 10, &key->size) || !key->size ||
	    key->size > VEIL_MAX_KEY_SIZE) {
		*error = "Invalid keyring key size";
		goto out;
	}
	if (!type_name || !p || !*p) {
		*error = "Invalid keyring key reference";
		goto out;
	}
	if (!strcmp(type_name, "logon")) {
		type = &key_type_logon;
	} else if (!strcmp(type_name, "user")) {
		type = &key_type_user;
	} else if (IS_ENABLED(CONFIG_ENCRYPTED_KEYS) &&
		   !strcmp(type_name, "encrypted")) {
		type = &key_type_encrypted;
	} else if (IS_ENABLED(CONFIG_TRUSTED_KEYS) &&
		   !strcmp(type_name, "trusted")) {
		type = &key_type_trusted;
	} else {
		*error = "Unsupported keyring key type";
		goto out;
	}

	kr = request_key(type, p, NULL);
	if (IS_ERR(kr)) {
		*error = "Keyring key not found";
		ret = PTR_ERR(kr);
		goto out;
	}
	down_read(&kr->sem);
	ret = veil_key_copy_payload(key, kr, error);
	up_read(&kr->sem);
	key_put(kr);
	if (ret)
		goto out;

	key->ref = kasprintf(GFP_KERNEL, "%s:%s", type_name, p);
	if (!key->ref) {
		*error = "Cannot allocate key";
		ret = -ENOMEM;
	}
out:
	kfree(buf);
	return ret;
}

/**
 * veil_key_decode() - read a key from hex digits or the kernel keyring
 * @key: an empty key, filled in on success.
 * @str: hex digits, "-" for no key (the null cipher), or
 *	":<size>:<type>:<description>" with a type of logon, user, encrypted
 *	or trusted (the last two where the kernel has them); hex digits are
 *	overwritten with '0' once decoded.
 * @error: set to a message naming the problem on failure.
 *
 * May sleep for as long as another process takes to construct the keyring
 * key (request_key() waits for a key under construction): call it without
 * the target's locks.
 *
 * Return: 0 or a negative errno; @key is left empty on failure.
 */
int veil_key_decode(struct veil_key *key, char *str, char **error)
{
	int ret;

	if (str[0] == ':')
		ret = veil_key_from_keyring(key, str, error);
	else
		ret = veil_key_from_hex(key, str, error);
	if (ret)
		veil_key_free(key);
	return ret;
}

/*
 * Give each transform its part of @bytes: @size split in tfms_count equal
 * parts, as dm-crypt splits a multi-key table's key (bytes left over by
 * the split are unused, as there). Every transform is keyed even after
 * one refused its part, so that a wipe leaves none with the old key; the
 * first error is returned.
 */
static int veil_key_setkey(struct veil_c *vc, const u8 *bytes,
			   unsigned int size)
{
	unsigned int i, part;
	int ret = 0, r;

	part = (size - veil_iv_key_extra(vc, size)) / vc->tfms_count;

	if (vc->aead)
		ret = veil_aead_setkey(vc, bytes, part);
	for (i = 0; !vc->aead && i < vc->tfms_count; i++) {
		r = crypto_skcipher_setkey(vc->tfms[i], bytes + i * part, part);
		if (!ret)
			ret = r;
	}
	r = veil_iv_setkey(vc, bytes, size, part);
	return ret ?: r;
}

/**
 * veil_key_load() - load a decoded key into the cipher
 * @vc: the target; the caller holds vc->key_lock once the target is live.
 *	A key of a different size than the current one is refused once the
 *	target has a key.
 * @key: from veil_key_decode(); taken over by the target on success,
 *	wiped and freed on failure.
 * @error: set to a message naming the problem on failure.
 *
 * On success the new key replaces the old one. On a failed setkey the
 * target is left without a valid key, so that resume is refused.
 *
 * Return: 0 or a negative errno.
 */
int veil_key_load(struct veil_c *vc, struct veil_key *key, char **error)
{
	unsigned int extra = veil_iv_key_extra(vc, key->size);
	int ret;

	if (vc->key.size && key->size != vc->key.size) {
		*error = "Key size differs from the table's";
		ret = -EINVAL;
		goto fail;
	}
	/*
	 * Only tcw's seed and whitening key can take the whole key, and an
	 * empty key ("-") leaves them nothing to take.
	 */
	if (extra && extra >= key->size) {
		*error = "Wrong key size for TCW";
		ret = -EINVAL;
		goto fail;
	}

	WRITE_ONCE(vc->key.valid, false);
	/* No slot made with the old key survives it. */
	veil_masks_stop(vc);
	ret = veil_key_setkey(vc, key->bytes, key->size);
	if (ret) {
		*error = key->size ? "Key size not supported by cipher" :
				     "Cipher needs a key";
		goto fail;
	}

	/* Not veil_key_free(): the IMA status reads the size without a lock. */
	kfree_sensitive(vc->key.bytes);
	kfree(vc->key.ref);
	vc->key = *key;
	*key = (struct veil_key){ };
	/* The AEADs that have masks take the whole key. */
	veil_masks_start(vc, vc->key.bytes, vc->key.size);
	WRITE_ONCE(vc->key.valid, true);
	return 0;
fail:
	veil_key_free(key);
	return ret;
}

/**
 * veil_key_wipe() - drop the key from the cipher and from memory
 * @vc: the target; must be suspended.
 *
 * The cipher is rekeyed with random bytes so that it no longer holds the
 * volume key, and the stored key is zeroed. The key size is kept, so that
 * "key set" can load a new key of the same size. Either way the target is
 * left without a valid key, so that resume is refused.
 *
 * Return: 0, or the cipher's error if it refused the random key; the
 * volume key may then still be in the cipher.
 */
int veil_key_wipe(struct veil_c *vc)
{
	struct veil_key *key = &vc->key;
	int ret;

	WRITE_ONCE(key->valid, false);
	/* Every ready mask cleared, none made until a key is set. */
	veil_masks_stop(vc);
	kfree(key->ref);
	key->ref = NULL;
	if (!key->bytes)
		return 0;
	get_random_bytes(key->bytes, key->size);
	ret = veil_key_setkey(vc, key->bytes, key->size);
	memzero_explicit(key->bytes, key->size);
	return ret;
}

/* A hex digit without a table lookup or a branch on the key's value. */
static char veil_hex_digit(u8 nibble)
{
	/* 0x27 is 'a' - '0' - 10: added only when nibble > 9. */
	return '0' + nibble + (((unsigned int)(9 - nibble) >> 4) & 0x27);
}

/**
 * veil_key_emit() - print the key field of the table line
 * @key: the key.
 * @result: output buffer.
 * @maxlen: size of @result.
 *
 * Prints ":<size>:<type>:<description>" for a keyring key, "-" for no
 * key, and the hex digits otherwise (zeros after a wipe, as dm-crypt
 * does), made without table lookups so that the time taken does not
 * depend on the key; as many as fit in a short buffer. The caller holds
 * vc->key_lock.
 *
 * Return: the number of characters written.
 */
unsigned int veil_key_emit(const struct veil_key *key, char *result,
			   unsigned int maxlen)
{
	unsigned int i, sz = 0;

	if (key->ref) {
		DMEMIT(":%u:%s", key->size, key->ref);
		return sz;
	}
	if (!key->size) {
		DMEMIT("-");
		return sz;
	}
	if (!key->bytes || !maxlen)
		return sz;
	/*
	 * A short buffer gets the digits that fit, as DMEMIT would: a full
	 * buffer makes device-mapper ask again with a larger one.
	 */
	for (i = 0; i < 2 * key->size && sz + 1 < maxlen; i++)
		result[sz++] = veil_hex_digit(i & 1 ? key->bytes[i / 2] & 0xf :
						     key->bytes[i / 2] >> 4);
	result[sz] = '\0';
	return sz;
}
