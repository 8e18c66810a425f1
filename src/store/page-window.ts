/** One page of a listing: skip `offset` rows, return at most `limit` (the API's page/per_page, translated). */
export interface PageWindow {
  offset: number;
  limit: number;
}
