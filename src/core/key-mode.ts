/** Test keys (`pk_test_…`) reach the sandbox and test servers; live keys the wholesalers' live servers. */
export type KeyMode = 'test' | 'live';
