/** Config files larger than this are not read (reported as `CONFIG_IO`); enforced while reading. */
export const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024;
