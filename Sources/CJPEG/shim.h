// libjpeg behind a small, crash-free surface.
//
// libjpeg reports errors by calling `error_exit`, which by default terminates the
// process. Swift cannot use setjmp/longjmp, so these wrappers keep the jump inside C
// and turn every libjpeg failure (and every warning, such as a truncated stream)
// into a return code with a message.
#ifndef AZSEED_CJPEG_SHIM_H
#define AZSEED_CJPEG_SHIM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int warned;
    char message[JMSG_LENGTH_MAX];
} azseed_jpeg_error;

static void azseed_jpeg_error_exit(j_common_ptr cinfo) {
    azseed_jpeg_error *err = (azseed_jpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
}

static void azseed_jpeg_emit_message(j_common_ptr cinfo, int level) {
    // level < 0 is a warning: libjpeg would silently patch over corrupt or truncated data.
    if (level < 0) {
        azseed_jpeg_error *err = (azseed_jpeg_error *)cinfo->err;
        if (!err->warned) {
            (*cinfo->err->format_message)(cinfo, err->message);
        }
        err->warned = 1;
    }
}

/// Decodes a whole JPEG. Returns 0 on success and fills width, height and components;
/// returns 1 with `message` (at least JMSG_LENGTH_MAX bytes) filled on any error or warning.
static inline int azseed_jpeg_check(const unsigned char *data, unsigned long length,
                                    int *width, int *height, int *components, char *message) {
    struct jpeg_decompress_struct cinfo;
    azseed_jpeg_error err;
    JSAMPLE *row = NULL;
    memset(&err, 0, sizeof(err));
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = azseed_jpeg_error_exit;
    err.pub.emit_message = azseed_jpeg_emit_message;
    if (setjmp(err.jump)) {
        strncpy(message, err.message, JMSG_LENGTH_MAX - 1);
        message[JMSG_LENGTH_MAX - 1] = 0;
        free(row);
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, length);
    jpeg_read_header(&cinfo, TRUE);
    jpeg_start_decompress(&cinfo);
    row = (JSAMPLE *)malloc((size_t)cinfo.output_width * (size_t)cinfo.output_components);
    if (row == NULL) {
        strcpy(message, "out of memory");
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW rows[1] = { row };
        jpeg_read_scanlines(&cinfo, rows, 1);
    }
    jpeg_finish_decompress(&cinfo);
    *width = (int)cinfo.output_width;
    *height = (int)cinfo.output_height;
    *components = cinfo.output_components;
    free(row);
    jpeg_destroy_decompress(&cinfo);
    if (err.warned) {
        strncpy(message, err.message, JMSG_LENGTH_MAX - 1);
        message[JMSG_LENGTH_MAX - 1] = 0;
        return 1;
    }
    return 0;
}

/// Encodes packed RGB pixels as a baseline JPEG. On success returns 0 and sets `*output`
/// (free it with `azseed_jpeg_free`) and `*outputLength`; returns 1 with `message` on error.
static inline int azseed_jpeg_encode_rgb(const unsigned char *pixels, int width, int height, int quality,
                                         unsigned char **output, unsigned long *outputLength, char *message) {
    struct jpeg_compress_struct cinfo;
    azseed_jpeg_error err;
    memset(&err, 0, sizeof(err));
    *output = NULL;
    *outputLength = 0;
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = azseed_jpeg_error_exit;
    err.pub.emit_message = azseed_jpeg_emit_message;
    if (setjmp(err.jump)) {
        strncpy(message, err.message, JMSG_LENGTH_MAX - 1);
        message[JMSG_LENGTH_MAX - 1] = 0;
        jpeg_destroy_compress(&cinfo);
        free(*output);
        *output = NULL;
        return 1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, output, outputLength);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    // Fixed settings so the bytes do not depend on library defaults that may drift.
    cinfo.dct_method = JDCT_ISLOW;
    cinfo.optimize_coding = TRUE;
    cinfo.write_JFIF_header = TRUE;
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW rows[1] = { (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * (size_t)width * 3) };
        jpeg_write_scanlines(&cinfo, rows, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return 0;
}

static inline void azseed_jpeg_free(unsigned char *buffer) { free(buffer); }

static inline int azseed_jpeg_message_capacity(void) { return JMSG_LENGTH_MAX; }

#endif
