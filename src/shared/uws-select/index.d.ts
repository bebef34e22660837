// The API Basalt and hyper-express use, as the 20.30 build declares it (20.57 keeps it).
export * from 'uws-legacy';
