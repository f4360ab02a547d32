// The account records (src/domain/accounts.ts), named where the account code uses them.
export * from '../domain/accounts.ts';
