// SPDX-License-Identifier: GPL-2.0
/*
 * veilsetup LUKS actions that touch only the header: format, keyslots,
 * dump, uuid, header backup and restore, erase, convert, repair, config.
 * Every one is a
 * libcryptsetup call with cryptsetup's prompts, messages and defaults;
 * none of them needs the veil target.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libcryptsetup.h>

#include "veilsetup.h"

/* --type for LUKS actions: NULL (any LUKS), CRYPT_LUKS1 or CRYPT_LUKS2. */
static int luks_type(const char **type)
{
	*type = NULL;
	if (!opt.type || !strcmp(opt.type, "luks"))
		return 0;
	if (!strcmp(opt.type, "luks1")) {
		*type = CRYPT_LUKS1;
		return 0;
	}
	if (!strcmp(opt.type, "luks2")) {
		*type = CRYPT_LUKS2;
		return 0;
	}
	fprintf(stderr, "Only LUKS1 and LUKS2 headers are handled here, not type %s.\n",
		opt.type);
	return -EINVAL;
}

/**
 * vs_load_luks() - open @device's LUKS header (--type, --header honoured)
 * @device: the device or image file.
 * @cd: the loaded device, to be freed with crypt_free().
 *
 * Return: 0, or a negative errno after cryptsetup's message.
 */
int vs_load_luks(const char *device, struct crypt_device **cd)
{
	const char *type;
	int r = luks_type(&type);

	if (r)
		return r;
	r = vs_crypt_init(opt.header, device, cd);
	if (r)
		return r;
	r = crypt_load(*cd, type ?: CRYPT_LUKS, NULL);
	if (r < 0) {
		/* A device that cannot be read is not one without a header. */
		if (r == -EIO)
			fprintf(stderr, "Cannot read the header of %s: input/output error.\n",
				opt.header ?: device);
		else
			fprintf(stderr, "Device %s is not a valid %s device.\n",
				opt.header ?: device, type ?: "LUKS");
		crypt_free(*cd);
		*cd = NULL;
		return -EINVAL;
	}
	return 0;
}

/**
 * vs_luks_dm_uuid() - the dm uuid of a mapping of a LUKS volume
 * @cd: the volume's header, loaded.
 * @name: the mapping's name, or NULL (none yet: --test-passphrase).
 * @out: VEIL-LUKS1- or VEIL-LUKS2-, the header's uuid without its dashes,
 *	 "-" and @name, as cryptsetup's CRYPT-LUKS2-<uuid>-<name>.
 * @len: the size of @out.
 */
void vs_luks_dm_uuid(struct crypt_device *cd, const char *name, char *out, size_t len)
{
	const char *type = crypt_get_type(cd) ?: "", *p = crypt_get_uuid(cd) ?: "";
	size_t n = snprintf(out, len, "%s", strcmp(type, CRYPT_LUKS1) ? VS_UUID_LUKS2 :
							     VS_UUID_LUKS1);

	for (; *p && n < len - 1; p++)
		if (*p != '-')
			out[n++] = *p;
	out[n] = '\0';
	snprintf(out + n, len - n, "-%s", name ?: "");
}

/*
 * The key file of an action that also takes one as an argument: -d wins,
 * with cryptsetup's message.
 */
static const char *key_file_arg(int argc, char **argv)
{
	if (argc > 1 && opt.key_file) {
		fprintf(stderr, "Option --key-file takes precedence over specified key file "
			"argument.\n");
		return opt.key_file;
	}
	return argc > 1 ? argv[1] : opt.key_file;
}

/* The passphrase of an existing slot (-d, or asked with @prompt). */
static int existing_passphrase(struct crypt_device *cd, const char *prompt,
			       char **pass, size_t *len)
{
	return vs_read_passphrase(cd, prompt, opt.key_file, opt.keyfile_offset,
				  opt.keyfile_size, 0, pass, len);
}

/* A new passphrase: the positional key file, or asked (twice on a tty). */
static int new_passphrase(struct crypt_device *cd, const char *prompt, const char *key_file,
			  char **pass, size_t *len)
{
	return vs_read_passphrase(cd, prompt, key_file,
				  opt.new_keyfile_offset, opt.new_keyfile_size,
				  VS_PASS_VERIFY, pass, len);
}

/*
 * The slot @pass opens (@slot or any; @flags: CRYPT_ACTIVATE_ALLOW_UNBOUND_KEY
 * for unbound ones too), or -EPERM after a message.
 */
static int slot_of(struct crypt_device *cd, int slot, const char *pass, size_t len,
		   uint32_t flags)
{
	slot = crypt_activate_by_passphrase(cd, NULL, slot, pass, len, flags);

	if (slot < 0) {
		fprintf(stderr, "No key available with this passphrase.\n");
		return slot == -ENOMEM ? -ENOMEM : -EPERM;
	}
	return slot;
}

/* PBKDF: libcryptsetup's default for @type, changed by the options given. */
static int set_pbkdf(struct crypt_device *cd, const char *type)
{
	const struct crypt_pbkdf_type *def = crypt_get_pbkdf_default(type);
	struct crypt_pbkdf_type pbkdf;

	if (!def)
		return -EINVAL;
	pbkdf = *def;
	if (opt.pbkdf)
		pbkdf.type = opt.pbkdf;
	if (opt.hash)
		pbkdf.hash = opt.hash;
	if (opt.iter_time)
		pbkdf.time_ms = opt.iter_time;
	if (opt.pbkdf_memory)
		pbkdf.max_memory_kb = opt.pbkdf_memory;
	if (opt.pbkdf_parallel)
		pbkdf.parallel_threads = opt.pbkdf_parallel;
	if (opt.pbkdf_iterations) {
		pbkdf.iterations = opt.pbkdf_iterations;
		pbkdf.time_ms = 0;
		pbkdf.flags |= CRYPT_PBKDF_NO_BENCHMARK;
	}
	if (!strcmp(pbkdf.type, CRYPT_KDF_PBKDF2)) {
		pbkdf.max_memory_kb = 0;
		pbkdf.parallel_threads = 0;
	} else {
		if (!pbkdf.max_memory_kb)
			pbkdf.max_memory_kb = def->max_memory_kb ?: 1048576;
		if (!pbkdf.parallel_threads)
			pbkdf.parallel_threads = def->parallel_threads ?: 4;
	}
	return crypt_set_pbkdf_type(cd, &pbkdf);
}

/*
 * --keyslot-cipher and --keyslot-key-size for a header of @type: LUKS2
 * only, with cryptsetup's message. Return: 0 or -EINVAL.
 */
static int keyslot_encryption(const char *type)
{
	if (!opt.keyslot_cipher || !strcmp(type ?: "", CRYPT_LUKS2))
		return 0;
	fprintf(stderr, "Keyslot encryption parameters can be set only for LUKS2 device.\n");
	return -EINVAL;
}

/* The keyslot cipher of the next keyslot @cd makes (--keyslot-cipher). */
static int set_keyslot_encryption(struct crypt_device *cd)
{
	int r = keyslot_encryption(crypt_get_type(cd));

	if (!r && opt.keyslot_cipher)
		r = crypt_keyslot_set_encryption(cd, opt.keyslot_cipher,
						 opt.keyslot_key_bits / 8);
	return r;
}

/* Split "aes-xts-plain64" into cipher and mode, as libcryptsetup takes them. */
static int split_cipher(const char *spec, char *cipher, char *mode)
{
	if (sscanf(spec, "%31[^-]-%31s", cipher, mode) != 2) {
		fprintf(stderr, "No known cipher specification pattern detected.\n");
		return -EINVAL;
	}
	return 0;
}

/* The header's first block, as the device holds it (not the page cache). */
#define VS_HEAD_BYTES	4096

/*
 * Read the first block of @path into @buf (VS_HEAD_BYTES, aligned).
 * Return: 0, or -1 if it cannot be read.
 */
static int read_head(const char *path, void *buf)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);	/* a file system without O_DIRECT */
	if (fd < 0)
		return -1;
	n = pread(fd, buf, VS_HEAD_BYTES, 0);
	close(fd);
	return n == VS_HEAD_BYTES ? 0 : -1;
}

/*
 * crypt_format() failed on @path: say whether it left the device as it was.
 * @before is the first block read before it, or NULL if that failed.
 */
static void format_failed(const char *path, const void *before)
{
	void *now = NULL;

	if (before && !posix_memalign(&now, VS_HEAD_BYTES, VS_HEAD_BYTES) &&
	    !read_head(path, now) && !memcmp(before, now, VS_HEAD_BYTES)) {
		free(now);	/* nothing written at the start: as it was */
		return;
	}
	free(now);
	fprintf(stderr, "luksFormat of %s did not finish after it began to write: its LUKS header may be partly written, and the device holds no usable volume. Run luksFormat again once the device works.\n",
		path);
}

/*
 * The header is written but its first keyslot is not: wipe both LUKS2
 * binary headers (the LUKS1 one), as cryptsetup wipes the signature, so
 * that no header without a passphrase is left behind.
 */
static int wipe_header(struct crypt_device *cd)
{
	uint64_t len = VS_HEAD_BYTES, meta = 0, slots = 0, data;

	if (!strcmp(crypt_get_type(cd) ?: "", CRYPT_LUKS2)) {
		if (!crypt_get_metadata_size(cd, &meta, &slots) && meta) {
			len = 2 * meta;
		} else {
			/*
			 * The secondary header lies at the metadata size,
			 * before the data: up to the data offset (sectors),
			 * at most both headers of the largest metadata size
			 * (4 MiB), so that 4 KiB does not leave it behind.
			 */
			data = crypt_get_data_offset(cd);
			if (data > (8ULL << 20) >> 9)
				data = (8ULL << 20) >> 9;
			if (data << 9 > len)
				len = data << 9;
		}
	}
	return crypt_wipe(cd, opt.header, CRYPT_WIPE_ZERO, 0, len, 0, 0, NULL, NULL);
}

/*
 * cryptsetup's --integrity names: the kernel's algorithm into @out and the
 * bytes of its key, which the volume key carries after the cipher's.
 */
static int integrity_mode(const char *name, char *out, size_t len, size_t *key_bytes)
{
	static const struct {
		const char *name, *alg;
		size_t key_bytes;
	} modes[] = {
		{ "aead", "aead", 0 }, { "poly1305", "poly1305", 0 }, { "none", "none", 0 },
		{ "hmac-sha1", "hmac(sha1)", 20 }, { "hmac-sha256", "hmac(sha256)", 32 },
		{ "hmac-sha512", "hmac(sha512)", 64 }, { "cmac-aes", "cmac(aes)", 16 },
	};
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(name, modes[i].name)) {
			snprintf(out, len, "%s", modes[i].alg);
			*key_bytes = modes[i].key_bytes;
			return 0;
		}
	fprintf(stderr, "No known integrity specification pattern detected.\n");
	return -EINVAL;
}

int vs_action_luks_format(int argc, char **argv)
{
	const char *spec = opt.cipher ?: "aes-xts-plain64", *type;
	struct crypt_params_luks2 p2 = { .sector_size = opt.sector_size,
					 .label = opt.label,
					 .subsystem = opt.subsystem,
					 .data_alignment = opt.align_payload };
	struct crypt_params_luks1 p1 = { .hash = opt.hash ?: "sha256",
					 .data_alignment = opt.align_payload };
	struct crypt_device *cd = NULL;
	char cipher[32], mode[32], *pass = NULL, question[512], integrity[32] = "", *vk = NULL;
	size_t pass_len = 0, key_bytes, integrity_bytes = 0, signatures;
	void *head = NULL;
	int r;

	r = luks_type(&type) ?: split_cipher(spec, cipher, mode);
	if (r)
		return r;
	type = type ?: CRYPT_LUKS2;
	if (!strcmp(type, CRYPT_LUKS1) && opt.sector_size > 512) {
		fprintf(stderr, "Unsupported encryption sector size.\n");
		return -EINVAL;
	}
	if (!strcmp(type, CRYPT_LUKS1) && opt.label) {
		fprintf(stderr, "Label is supported only for LUKS2.\n");
		return -EINVAL;
	}
	if (!strcmp(type, CRYPT_LUKS1) &&
	    (vs_option_given("luks2-metadata-size") || vs_option_given("luks2-keyslots-size"))) {
		fprintf(stderr, "Unsupported LUKS2 metadata size options.\n");
		return -EINVAL;
	}
	/* Before anything is written (cryptsetup checks it after the header). */
	r = keyslot_encryption(type);
	if (r)
		return r;
	if (opt.integrity) {
		if (strcmp(type, CRYPT_LUKS2)) {
			fprintf(stderr, "Integrity option can be used only for LUKS2 format.\n");
			return -EINVAL;
		}
		r = integrity_mode(opt.integrity, integrity, sizeof(integrity), &integrity_bytes);
		if (r)
			return r;
		p2.integrity = integrity;
	}
	/* cryptsetup's default: 256 bits, doubled for XTS's two keys. */
	key_bytes = opt.key_bits ? opt.key_bits / 8 : strncmp(mode, "xts", 3) ? 32 : 64;
	key_bytes += integrity_bytes;
	if (strstr(mode, "ctr"))
		fprintf(stderr, "WARNING: %s is CTR mode: every rewrite of a sector reuses "
			"its keystream. Use XTS unless nobody can image the device twice.\n",
			spec);

	r = vs_crypt_init(opt.header, argv[0], &cd);
	if (r)
		return r;
	if (opt.rng_type >= 0)
		crypt_set_rng_type(cd, opt.rng_type);
	/* libcryptsetup checks the sizes: powers of two, within its limits */
	if (vs_option_given("luks2-metadata-size") || vs_option_given("luks2-keyslots-size")) {
		r = crypt_set_metadata_size(cd, opt.luks2_metadata_size, opt.luks2_keyslots_size);
		if (r < 0) {
			fprintf(stderr, "Unsupported LUKS2 metadata size options.\n");
			crypt_free(cd);
			return r;
		}
	}
	/* --offset: where the data starts, in 512-byte sectors, as cryptsetup */
	if (opt.offset) {
		r = crypt_set_data_offset(cd, opt.offset);
		if (r < 0) {
			crypt_free(cd);
			return r;
		}
	}
	/* Named before the question, wiped before the header is written. */
	r = vs_signatures_report(opt.header ?: argv[0], &signatures);
	if (r) {
		crypt_free(cd);
		return r;
	}
	snprintf(question, sizeof(question),
		 "This will overwrite data on %s irrevocably.", opt.header ?: argv[0]);
	/* As cryptsetup: a "no" here is exit code 1, not 2. */
	r = vs_confirm(question, "Operation aborted.") ? -EINVAL : 0;
	if (!r)
		r = vs_read_passphrase(cd, "Enter passphrase for the new volume: ",
				       key_file_arg(argc, argv), opt.keyfile_offset,
				       opt.keyfile_size, VS_PASS_VERIFY, &pass, &pass_len);
	if (!r && opt.volume_key_file)
		r = vs_read_volume_key(opt.volume_key_file, key_bytes, &vk);
	if (!r)
		r = set_pbkdf(cd, type);
	if (!r && signatures)
		r = vs_signatures_wipe(opt.header ?: argv[0]);
	if (!r) {
		/* What the start holds now; NULL if it cannot be read. */
		if (posix_memalign(&head, VS_HEAD_BYTES, VS_HEAD_BYTES))
			head = NULL;
		else if (read_head(opt.header ?: argv[0], head)) {
			free(head);
			head = NULL;
		}
		if (opt.integrity_legacy_padding)
			crypt_set_compatibility(cd, CRYPT_COMPAT_LEGACY_INTEGRITY_PADDING);
		r = crypt_format(cd, type, cipher, mode, opt.uuid, vk, key_bytes,
				 !strcmp(type, CRYPT_LUKS1) ? (void *)&p1 : (void *)&p2);
		if (r < 0)
			format_failed(opt.header ?: argv[0], head);
	}
	if (!r) {
		r = set_keyslot_encryption(cd) ?:
		    crypt_keyslot_add_by_volume_key(cd, opt.key_slot, vk, vk ? key_bytes : 0,
						    pass, pass_len);
		if (r < 0 && wipe_header(cd) < 0)
			fprintf(stderr, "The LUKS header on %s is written, but its first keyslot is not, and it could not be wiped: no passphrase opens it. Run luksFormat again.\n",
				opt.header ?: argv[0]);
		else if (r >= 0 && opt.verbose)
			printf("Key slot %d created.\n", r);
	}
	if (r >= 0 && opt.integrity && !opt.integrity_no_wipe && strcmp(integrity, "none"))
		r = vs_integrity_wipe(cd);
	free(head);
	crypt_free(cd);
	crypt_safe_free(pass);
	crypt_safe_free(vk);
	return r < 0 ? r : 0;
}

/*
 * @device's LUKS2 header (--header if given), as cryptsetup's actions that
 * take LUKS2 only. Return: 0, or a negative errno after its message.
 */
static int load_luks2(const char *device, struct crypt_device **cd)
{
	int r = vs_crypt_init(opt.header, device, cd);

	if (r)
		return r;
	r = crypt_load(*cd, CRYPT_LUKS2, NULL);
	if (r < 0) {
		fprintf(stderr, "Device %s is not a valid LUKS2 device.\n", opt.header ?: device);
		crypt_free(*cd);
		*cd = NULL;
	}
	return r;
}

/*
 * luksAddKey --unbound, as cryptsetup 2.6.1's luksAddUnboundKey(): a
 * LUKS2 keyslot of --key-size bits that no data segment uses, holding the
 * key of --volume-key-file or a random one, under the passphrase of the
 * positional key file or asked. -S is that keyslot; no other is opened.
 */
static int add_unbound_key(int argc, char **argv)
{
	size_t key_size = opt.key_bits / 8, len = 0;
	struct crypt_device *cd = NULL;
	char *key = NULL, *pass = NULL;
	int r;

	r = load_luks2(argv[0], &cd);
	if (r)
		return r;
	r = set_keyslot_encryption(cd);
	if (!r && set_pbkdf(cd, crypt_get_type(cd))) {
		fprintf(stderr, "Failed to set pbkdf parameters.\n");
		r = -EINVAL;
	}
	if (!r && opt.volume_key_file)
		r = vs_read_volume_key(opt.volume_key_file, key_size, &key);
	if (!r)
		r = new_passphrase(cd, "Enter new passphrase for key slot: ",
				   argc > 1 ? argv[1] : NULL, &pass, &len);
	if (!r)
		r = crypt_keyslot_add_by_key(cd, opt.key_slot, key, key_size, pass, len,
					     CRYPT_VOLUME_KEY_NO_SEGMENT);
	if (r >= 0 && opt.verbose)
		printf("Key slot %d created.\n", r);
	crypt_safe_free(pass);
	crypt_safe_free(key);
	crypt_free(cd);
	return r < 0 ? r : 0;
}

/*
 * luksAddKey's context for the existing keyslot, as cryptsetup 2.6: the
 * volume key (--volume-key-file), a LUKS2 token when --token-* ask for
 * one (unless -d FILE), else the passphrase (-d or asked), checked before
 * the new one is asked for. *@vk holds the key until the add.
 */
static int add_key_old(struct crypt_device *cd, char **vk, char **pass,
		       struct crypt_keyslot_context **kc)
{
	size_t key_size = crypt_get_volume_key_size(cd), len = 0;
	int r;

	if (opt.volume_key_file) {
		if (!key_size && !opt.key_bits) {
			fprintf(stderr, "Cannot determine volume key size for LUKS without keyslots, please use --key-size option.\n");
			return -EINVAL;
		}
		key_size = key_size ?: (size_t)opt.key_bits / 8;
		r = vs_read_volume_key(opt.volume_key_file, key_size, vk);
		if (r)
			return r;
		r = crypt_volume_key_verify(cd, *vk, key_size);
		if (r == -EPERM)
			fprintf(stderr, "Volume key does not match the volume.\n");
		return r < 0 ? r : crypt_keyslot_context_init_by_volume_key(cd, *vk, key_size, kc);
	}
	if ((!opt.key_file || !strcmp(opt.key_file, "-")) && vs_token_preferred())
		return crypt_keyslot_context_init_by_token(cd, opt.token_id, opt.token_type,
							   NULL, 0, NULL, kc);
	r = existing_passphrase(cd, "Enter any existing passphrase: ", pass, &len);
	if (!r)
		r = slot_of(cd, CRYPT_ANY_SLOT, *pass, len, 0);
	if (r < 0)
		return r;
	if (opt.verbose)
		printf("Key slot %d unlocked.\n", r);
	return crypt_keyslot_context_init_by_passphrase(cd, *pass, len, kc);
}

/*
 * luksAddKey's context for the new keyslot: the passphrase of the new key
 * file (the argument, or --new-keyfile), else of the LUKS2 token
 * --new-token-id (@kc itself if that is the token --token-id opens), else
 * asked. *@kc_new stays NULL when the old keyslot's context serves.
 */
static int add_key_new(struct crypt_device *cd, const char *new_file, char **pass,
		       struct crypt_keyslot_context **kc_new)
{
	size_t len = 0;
	int r;

	if ((!new_file || !strcmp(new_file, "-")) && vs_option_given("new-token-id")) {
		if (opt.new_token_id == opt.token_id)
			return 0;
		return crypt_keyslot_context_init_by_token(cd, opt.new_token_id, NULL, NULL, 0,
							   NULL, kc_new);
	}
	r = new_passphrase(cd, "Enter new passphrase for key slot: ", new_file, pass, &len);
	return r ?: crypt_keyslot_context_init_by_passphrase(cd, *pass, len, kc_new);
}

int vs_action_add_key(int argc, char **argv)
{
	const char *new_file = argc > 1 ? argv[1] : opt.new_key_file;
	struct crypt_keyslot_context *kc = NULL, *kc_new = NULL;
	int slot_old = opt.key_slot, slot_new = opt.new_key_slot, r;
	char *vk = NULL, *old = NULL, *new = NULL;
	struct crypt_device *cd = NULL;

	if (opt.unbound)
		return add_unbound_key(argc, argv);
	/* As cryptsetup 2.6: -S is the new slot unless --new-key-slot is given. */
	if (!vs_option_given("new-key-slot") && vs_option_given("key-slot")) {
		if (!opt.batch)
			printf("WARNING: The --key-slot parameter is used for new keyslot number.\n");
		slot_old = CRYPT_ANY_SLOT;
		slot_new = opt.key_slot;
	}
	r = vs_load_luks(argv[0], &cd);
	if (r)
		return r;
	r = set_keyslot_encryption(cd);
	if (!r && set_pbkdf(cd, crypt_get_type(cd))) {
		fprintf(stderr, "Failed to set pbkdf parameters.\n");
		r = -EINVAL;
	}
	r = r ?: add_key_old(cd, &vk, &old, &kc);
	r = r < 0 ? r : add_key_new(cd, new_file, &new, &kc_new);
	if (r >= 0)
		r = vs_token_add_key(cd, slot_old, kc, slot_new, kc_new ?: kc);
	if (r >= 0 && opt.verbose)
		printf("Key slot %d created.\n", r);
	crypt_keyslot_context_free(kc);
	crypt_keyslot_context_free(kc_new);
	crypt_safe_free(vk);
	crypt_safe_free(old);
	crypt_safe_free(new);
	crypt_free(cd);
	return r < 0 ? r : 0;
}

/* cryptsetup's question before the last keyslot goes, and its answer to a no. */
#define VS_LAST_SLOT	"This is the last keyslot. Device will become unusable after purging this key."
#define VS_SLOT_KEPT	"Operation aborted, the keyslot was NOT wiped."

/* Destroy @slot, asking first when it is the last one. */
static int destroy_slot(struct crypt_device *cd, int slot)
{
	if (crypt_keyslot_status(cd, slot) == CRYPT_SLOT_ACTIVE_LAST &&
	    vs_confirm(VS_LAST_SLOT, VS_SLOT_KEPT))
		return -EPERM;
	return crypt_keyslot_destroy(cd, slot);
}

int vs_action_remove_key(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	char *pass = NULL;
	size_t len = 0;
	int r;

	r = vs_load_luks(argv[0], &cd);
	if (r)
		return r;
	r = vs_read_passphrase(cd, "Enter passphrase to be deleted: ",
			       key_file_arg(argc, argv), opt.keyfile_offset,
			       opt.keyfile_size, 0, &pass, &len);
	if (!r)
		r = slot_of(cd, CRYPT_ANY_SLOT, pass, len, 0);
	if (r >= 0) {
		if (opt.verbose)
			printf("Key slot %d selected for deletion.\n", r);
		r = destroy_slot(cd, r);
	}
	crypt_free(cd);
	crypt_safe_free(pass);
	return r < 0 ? r : 0;
}

int vs_action_change_key(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	char *old = NULL, *new = NULL;
	size_t old_len = 0, new_len = 0;
	int r;

	r = vs_load_luks(argv[0], &cd);
	if (r)
		return r;
	r = set_keyslot_encryption(cd);
	if (r)
		goto out;
	r = existing_passphrase(cd, "Enter passphrase to be changed: ", &old, &old_len);
	if (r)
		goto out;
	/* As cryptsetup: an unbound keyslot's passphrase may be changed too. */
	r = slot_of(cd, opt.key_slot, old, old_len, CRYPT_ACTIVATE_ALLOW_UNBOUND_KEY);
	if (r < 0)
		goto out;
	r = new_passphrase(cd, "Enter new passphrase: ", argc > 1 ? argv[1] : NULL,
			   &new, &new_len) ?:
	    set_pbkdf(cd, crypt_get_type(cd));
	/* As cryptsetup: --key-slot (or any) for the old and the new slot. */
	if (!r)
		r = crypt_keyslot_change_by_passphrase(cd, opt.key_slot, opt.key_slot,
						       old, old_len, new, new_len);
	if (r >= 0 && opt.verbose)
		printf("Key slot %d changed.\n", r);
out:
	crypt_free(cd);
	crypt_safe_free(old);
	crypt_safe_free(new);
	return r < 0 ? r : 0;
}

/*
 * As cryptsetup: the passphrase must open a slot other than @kill, or @kill
 * itself when it is the last one.
 */
static int remaining_slot(struct crypt_device *cd, int kill, const char *pass, size_t len)
{
	int i, max = crypt_keyslot_max(crypt_get_type(cd));

	for (i = 0; i < max; i++) {
		crypt_keyslot_info ki = crypt_keyslot_status(cd, i);

		if (i == kill || (ki != CRYPT_SLOT_ACTIVE && ki != CRYPT_SLOT_ACTIVE_LAST))
			continue;
		if (crypt_activate_by_passphrase(cd, NULL, i, pass, len, 0) == i)
			return i;
	}
	if (crypt_keyslot_status(cd, kill) == CRYPT_SLOT_ACTIVE_LAST &&
	    crypt_activate_by_passphrase(cd, NULL, kill, pass, len, 0) == kill)
		return kill;
	fprintf(stderr, "No key available with this passphrase.\n");
	return -EPERM;
}

int vs_action_kill_slot(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	char *pass = NULL;
	size_t len = 0;
	uint64_t slot;
	int r;

	(void)argc;
	r = vs_load_luks(argv[0], &cd);
	if (r)
		return r;
	r = vs_number_arg(argv[1], "key slot", crypt_keyslot_max(crypt_get_type(cd)) - 1,
			  &slot);
	if (r)
		goto out;
	switch (crypt_keyslot_status(cd, slot)) {
	case CRYPT_SLOT_ACTIVE:
	case CRYPT_SLOT_ACTIVE_LAST:
	case CRYPT_SLOT_UNBOUND:
		break;
	default:
		fprintf(stderr, "Keyslot %d is not active.\n", (int)slot);
		r = -EINVAL;
		goto out;
	}
	/*
	 * As cryptsetup: a remaining passphrase proves the right, unless -q on
	 * a terminal; an empty standard input is no passphrase. The question
	 * about the last keyslot comes first, and not with a key file.
	 */
	if (!opt.batch || opt.key_file || !isatty(STDIN_FILENO)) {
		if (crypt_keyslot_status(cd, slot) == CRYPT_SLOT_ACTIVE_LAST && !opt.key_file &&
		    vs_confirm(VS_LAST_SLOT, VS_SLOT_KEPT)) {
			r = -EPERM;
			goto out;
		}
		r = existing_passphrase(cd, "Enter any remaining passphrase: ", &pass, &len);
		if (!r)
			r = remaining_slot(cd, slot, pass, len);
		else if (r == -EPIPE && (!opt.key_file || !strcmp(opt.key_file, "-")))
			r = 0;
		if (r < 0)
			goto out;
	}
	r = crypt_keyslot_destroy(cd, slot);
out:
	crypt_free(cd);
	crypt_safe_free(pass);
	return r < 0 ? r : 0;
}

/*
 * luksDump --dump-volume-key, as cryptsetup: a YES first (on a terminal,
 * without -q), a passphrase of any keyslot, then the header's summary and
 * the key in hex, or with --volume-key-file the key into that new file.
 */
static int dump_volume_key(struct crypt_device *cd)
{
	size_t key_size = crypt_get_volume_key_size(cd), len = 0;
	char *key = NULL, *pass = NULL, prompt[256];
	int r;

	if (vs_confirm("The header dump with volume key is sensitive information\n"
		       "that allows access to encrypted partition without a passphrase.\n"
		       "This dump should be stored encrypted in a safe place.", NULL))
		return -EPERM;
	key = crypt_safe_alloc(key_size ?: 1);
	if (!key)
		return -ENOMEM;
	snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ", crypt_get_device_name(cd));
	r = existing_passphrase(cd, prompt, &pass, &len);
	if (r)
		goto out;
	r = vs_volume_key_get(cd, key, &key_size, pass, len);
	if (r < 0)
		goto out;
	printf("LUKS header information for %s\n", crypt_get_device_name(cd));
	printf("Cipher name:   \t%s\n", crypt_get_cipher(cd));
	printf("Cipher mode:   \t%s\n", crypt_get_cipher_mode(cd));
	printf("Payload offset:\t%d\n", (int)crypt_get_data_offset(cd));
	printf("UUID:          \t%s\n", crypt_get_uuid(cd));
	r = vs_print_mk(key, key_size, opt.volume_key_file);
out:
	crypt_safe_free(pass);
	crypt_safe_free(key);
	return r < 0 ? r : 0;
}

/*
 * luksDump --unbound -S N, as cryptsetup 2.6.1: the unbound key of keyslot
 * N, after a YES and its passphrase, in hex or into --volume-key-file.
 */
static int dump_unbound_key(struct crypt_device *cd)
{
	size_t key_size, len = 0;
	char *key = NULL, *pass = NULL, prompt[256];
	int r;

	if (crypt_keyslot_status(cd, opt.key_slot) != CRYPT_SLOT_UNBOUND) {
		fprintf(stderr, "Keyslot %d does not contain unbound key.\n", opt.key_slot);
		return -EINVAL;
	}
	if (vs_confirm("The header dump with unbound key is sensitive information.\n"
		       "This dump should be stored encrypted in a safe place.", NULL))
		return -EPERM;
	r = crypt_keyslot_get_key_size(cd, opt.key_slot);
	if (r < 0)
		return -EINVAL;
	key_size = r;
	key = crypt_safe_alloc(key_size);
	if (!key)
		return -ENOMEM;
	snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ", crypt_get_device_name(cd));
	r = existing_passphrase(cd, prompt, &pass, &len);
	if (r)
		goto out;
	r = crypt_volume_key_get(cd, opt.key_slot, key, &key_size, pass, len);
	if (r == -EPERM)
		fprintf(stderr, "No key available with this passphrase.\n");
	else if (r == -ENOENT)
		fprintf(stderr, "No usable keyslot is available.\n");
	if (r < 0)
		goto out;
	if (opt.verbose)
		printf("Key slot %d unlocked.\n", r);
	if (opt.volume_key_file) {
		r = vs_write_volume_key(opt.volume_key_file, key, key_size);
		if (r < 0)
			goto out;
	}
	printf("LUKS header information for %s\n", crypt_get_device_name(cd));
	printf("UUID:    \t%s\n", crypt_get_uuid(cd));
	printf("Keyslot: \t%d\n", opt.key_slot);
	printf("Key bits:\t%d\n", (int)key_size * 8);
	if (opt.volume_key_file) {
		printf("Key stored to file %s.\n", opt.volume_key_file);
		goto out;
	}
	printf("Unbound Key:\t");
	r = vs_print_key_hex(key, key_size, 16);
out:
	crypt_safe_free(pass);
	crypt_safe_free(key);
	return r < 0 ? r : 0;
}

int vs_action_dump(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	int r;

	(void)argc;
	r = vs_load_luks(argv[0], &cd);
	if (r)
		return r;
	if (opt.dump_volume_key)
		r = dump_volume_key(cd);
	else if (opt.unbound)
		r = dump_unbound_key(cd);
	else if (opt.dump_json)
		r = crypt_dump_json(cd, NULL, 0);
	else
		r = crypt_dump(cd);
	crypt_free(cd);
	return r;
}

int vs_action_uuid(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	int r;

	(void)argc;
	r = vs_load_luks(argv[0], &cd);
	if (r)
		return r;
	if (opt.uuid) {
		r = crypt_set_uuid(cd, opt.uuid);
	} else {
		const char *uuid = crypt_get_uuid(cd);

		printf("%s\n", uuid ?: "");
	}
	crypt_free(cd);
	return r;
}

int vs_action_is_luks(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	const char *type;
	int r;

	(void)argc;
	r = luks_type(&type);
	if (r)
		return r;
	if (vs_crypt_init(opt.header, argv[0], &cd))
		return -ENODEV;
	r = crypt_load(cd, type ?: CRYPT_LUKS, NULL);
	if (r < 0 && opt.verbose)
		fprintf(stderr, "Device %s is not a valid %s device.\n", argv[0], type ?: "LUKS");
	crypt_free(cd);
	return r < 0 ? -EINVAL : 0;
}

static int need_backup_file(void)
{
	if (opt.backup_file)
		return 0;
	fprintf(stderr, "Option --header-backup-file is required.\n");
	return -EINVAL;
}

int vs_action_header_backup(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	const char *type;
	int r;

	(void)argc;
	r = need_backup_file() ?: luks_type(&type) ?: vs_crypt_init(opt.header, argv[0], &cd);
	if (!r)
		r = crypt_header_backup(cd, type, opt.backup_file);
	crypt_free(cd);
	return r;
}

int vs_action_header_restore(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	char question[512];
	const char *type;
	int r;

	(void)argc;
	r = need_backup_file() ?: luks_type(&type) ?: vs_crypt_init(opt.header, argv[0], &cd);
	if (r)
		goto out;
	if (crypt_load(cd, CRYPT_LUKS, NULL) >= 0) {
		snprintf(question, sizeof(question), "Device %s already contains LUKS "
			 "header. Replacing header will destroy existing keyslots.",
			 argv[0]);
		/* As cryptsetup: no message, exit code 1. */
		r = vs_confirm(question, NULL) ? -EINVAL : 0;
		if (r)
			goto out;
		crypt_free(cd);
		cd = NULL;
		r = vs_crypt_init(opt.header, argv[0], &cd);
		if (r)
			goto out;
	}
	r = crypt_header_restore(cd, type, opt.backup_file);
out:
	crypt_free(cd);
	return r;
}

int vs_action_erase(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	char question[512];
	int i, r, max;

	(void)argc;
	r = vs_load_luks(argv[0], &cd);
	if (r)
		return r;
	snprintf(question, sizeof(question), "This operation will erase all keyslots on "
		 "device %s.\nDevice will become unusable after this operation.", argv[0]);
	r = vs_confirm(question, "Operation aborted, keyslots were NOT wiped.");
	max = crypt_keyslot_max(crypt_get_type(cd));
	for (i = 0; !r && i < max; i++) {
		crypt_keyslot_info ki = crypt_keyslot_status(cd, i);

		if (ki == CRYPT_SLOT_ACTIVE || ki == CRYPT_SLOT_ACTIVE_LAST ||
		    ki == CRYPT_SLOT_UNBOUND)
			r = crypt_keyslot_destroy(cd, i);
	}
	crypt_free(cd);
	return r;
}

/*
 * convert --type luks1|luks2, as cryptsetup 2.6.1: a question (unless -q),
 * then libcryptsetup's crypt_convert(), which refuses what the other
 * format cannot hold with its own message.
 */
int vs_action_convert(int argc, char **argv)
{
	const char *to, *from, *device = opt.header ?: argv[0];
	struct crypt_device *cd = NULL;
	char question[512];
	int r;

	(void)argc;
	if (opt.type && !strcmp(opt.type, "luks2")) {
		to = CRYPT_LUKS2;
	} else if (opt.type && !strcmp(opt.type, "luks1")) {
		to = CRYPT_LUKS1;
	} else {
		fprintf(stderr, "Invalid LUKS type, only luks1 and luks2 are supported.\n");
		return -EINVAL;
	}
	r = vs_crypt_init(opt.header, argv[0], &cd);
	if (r)
		return r;
	r = crypt_load(cd, CRYPT_LUKS, NULL);
	from = r ? NULL : crypt_get_type(cd);
	if (!from) {
		fprintf(stderr, "Device %s is not a valid LUKS device.\n", device);
	} else if (!strcmp(from, to)) {
		fprintf(stderr, "Device is already %s type.\n", to);
		r = -EINVAL;
	} else {
		snprintf(question, sizeof(question),
			 "This operation will convert %s to %s format.\n", device, to);
		r = vs_confirm(question, "Operation aborted, device was NOT converted.\n") ?:
		    crypt_convert(cd, to, NULL);
	}
	crypt_free(cd);
	return r;
}

/* cryptsetup's quiet_log(): libcryptsetup's messages with -v only. */
static void quiet_log(int level, const char *msg, void *usrptr)
{
	if (opt.verbose || (level != CRYPT_LOG_ERROR && level != CRYPT_LOG_NORMAL))
		vs_log(level, msg, usrptr);
}

/*
 * repair, as cryptsetup 2.6.1: a LUKS2 header that loads is repaired by
 * that load (libcryptsetup's autorepair); any other header is handed to
 * crypt_repair() after a question (unless -q). A LUKS2 re-encryption left
 * in the header is not recovered: that is cryptsetup's reencrypt.
 */
int vs_action_repair(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	const char *type;
	int r;

	(void)argc;
	r = luks_type(&type) ?: vs_crypt_init(opt.header, argv[0], &cd);
	if (r)
		return r;
	crypt_set_log_callback(cd, quiet_log, NULL);
	r = crypt_load(cd, type, NULL);
	crypt_set_log_callback(cd, vs_log, NULL);
	if (!r && !strcmp(crypt_get_type(cd), CRYPT_LUKS2)) {
		if (opt.verbose)
			printf("No known problems detected for LUKS header.\n");
	} else {
		r = vs_confirm("Really try to repair LUKS device header?", "Operation aborted.\n") ?
		    -EINVAL : crypt_repair(cd, type, NULL);
	}
	if (!r && !strcmp(crypt_get_type(cd) ?: "", CRYPT_LUKS2) &&
	    crypt_reencrypt_status(cd, NULL) != CRYPT_REENCRYPT_NONE) {
		fprintf(stderr, "The LUKS2 header holds a re-encryption: recover it with cryptsetup repair, veil does not re-encrypt.\n");
		r = -EINVAL;
	}
	crypt_free(cd);
	return r;
}

/*
 * config (luksConfig), as cryptsetup 2.6.1: --priority of keyslot -S,
 * then --label and --subsystem (both set together: one not given is
 * cleared, as libcryptsetup's crypt_set_label()).
 */
int vs_action_config(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	int r;

	(void)argc;
	if (!vs_option_given("priority") && !opt.label && !opt.subsystem) {
		fprintf(stderr, "Option --priority, --label or --subsystem is missing.\n");
		return -EINVAL;
	}
	r = load_luks2(argv[0], &cd);
	if (r)
		return r;
	if (vs_option_given("priority"))
		r = crypt_keyslot_status(cd, opt.key_slot) == CRYPT_SLOT_INVALID ? -EINVAL :
		    crypt_keyslot_set_priority(cd, opt.key_slot, opt.priority);
	if (!r && (opt.label || opt.subsystem))
		r = crypt_set_label(cd, opt.label, opt.subsystem);
	crypt_free(cd);
	return r;
}

/*
 * luksConvertKey, as cryptsetup 2.6.1: the keyslot the passphrase (-d, or
 * asked) opens, -S or any, is written again with the PBKDF and keyslot
 * cipher options given, or libcryptsetup's defaults.
 */
int vs_action_convert_key(int argc, char **argv)
{
	struct crypt_device *cd = NULL;
	char *pass = NULL;
	size_t len = 0;
	int r;

	(void)argc;
	r = load_luks2(argv[0], &cd);
	if (r)
		return r;
	r = set_keyslot_encryption(cd);
	if (r < 0)
		goto out;
	if (crypt_keyslot_status(cd, opt.key_slot) == CRYPT_SLOT_INACTIVE) {
		fprintf(stderr, "Keyslot %d is not active.\n", opt.key_slot);
		r = -EINVAL;
		goto out;
	}
	if (set_pbkdf(cd, crypt_get_type(cd))) {
		fprintf(stderr, "Failed to set pbkdf parameters.\n");
		r = -EINVAL;
		goto out;
	}
	r = existing_passphrase(cd, "Enter passphrase for keyslot to be converted: ", &pass, &len);
	if (r)
		goto out;
	r = crypt_keyslot_change_by_passphrase(cd, opt.key_slot, opt.key_slot, pass, len, pass, len);
	if (r == -EPERM)
		fprintf(stderr, "No key available with this passphrase.\n");
	else if (r == -ENOENT)
		fprintf(stderr, "No usable keyslot is available.\n");
	else if (r >= 0 && opt.verbose)
		printf("Key slot %d created.\n", r);
out:
	crypt_safe_free(pass);
	crypt_free(cd);
	return r < 0 ? r : 0;
}
