/** OpenAI's bounds of a file's expiry (`expires_after.seconds` of an upload, `output_expires_after.seconds`
 * of a batch): an hour to 30 days after the file's creation. */
export const FILE_EXPIRY_MIN_SECONDS = 3_600;
export const FILE_EXPIRY_MAX_SECONDS = 2_592_000;
