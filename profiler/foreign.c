/*
 * Files and folders of formats spprof does not read, named in the refusal
 * (foreign.h): one row per format, its test on the first bytes (or the
 * folder's members) and what to do instead.
 */
#include "profiler/foreign.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int prefix(const unsigned char *b, size_t got, const char *magic, size_t n)
{
	return got >= n && memcmp(b, magic, n) == 0;
}

/* Whether the first bytes hold needle (not NUL-terminated). */
static int holds(const unsigned char *b, size_t got, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= got; i++)
		if (memcmp(b + i, needle, n) == 0)
			return 1;
	return 0;
}

static int is_hdf5(const unsigned char *b, size_t got, const char *path)
{
	(void)path;
	return prefix(b, got, "\x89HDF\r\n\x1a\n", 8);
}

/* A pickle of protocol 2 to 5 (torch's legacy format is read before this test). */
static int is_pickle(const unsigned char *b, size_t got, const char *path)
{
	(void)path;
	return got >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5;
}

static int is_openvino(const unsigned char *b, size_t got, const char *path)
{
	(void)path;
	return prefix(b, got, "<?xml", 5) && holds(b, got, "<net ");
}

static const struct foreign {
	const char *what, *instead;
	int (*test)(const unsigned char *b, size_t got, const char *path);
} foreign[] = {
	{"a Keras / HDF5 file (.h5)", "export the weights to safetensors or the model to ONNX",
	 is_hdf5},
	{"a Python pickle that is not a torch.save file",
	 "load it in Python and save its tensors with torch.save or safetensors", is_pickle},
	{"an OpenVINO IR (.xml)", "profile the ONNX model it was converted from", is_openvino},
};

int spp_foreign_file(const char *path, const unsigned char *b, size_t got, struct spp_error *err)
{
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
		if (foreign[i].test(b, got, path))
			return spp_error_set(err, SPP_E_UNSUPPORTED,
					     "'%s': %s, which spprof does not read: %s", path,
					     foreign[i].what, foreign[i].instead);
	return SPP_OK;
}

/* Whether folder dir holds member name. */
static int has_member(const char *dir, const char *name)
{
	char p[4096];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p))
		return 0;
	return stat(p, &st) == 0;
}

int spp_foreign_dir(const char *path, struct spp_error *err)
{
	static const struct {
		const char *member, *what, *instead;
	} dirs[] = {
		{"saved_model.pb", "TensorFlow SavedModel", "convert it to ONNX (tf2onnx --saved-model)"},
	};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (has_member(path, dirs[i].member))
			return spp_error_set(err, SPP_E_UNSUPPORTED,
					     "'%s': a folder holding a %s, which spprof does not read: %s",
					     path, dirs[i].what, dirs[i].instead);
	return SPP_OK;
}
