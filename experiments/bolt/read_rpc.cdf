# Google READ RPC sizes, APPROXIMATED (the thesis's Fig. 4.1 data is not public): a step CDF
# log-linear between the points the thesis states: 62% of RPCs within 1 BDP (62,388 B) and 80%
# within 4 BDP at 100 Gb/s; 89% within 4 BDP at 400 Gb/s (998,208 B); sizes from 64 B to 10 MB
# (the NSDI'23 Fig. 1 axis). See docs/protocols/bolt.md.
127 0.062000
253 0.124000
504 0.186000
1004 0.248000
1998 0.310000
3977 0.372000
7915 0.434000
15751 0.496000
31348 0.558000
62388 0.620000
124776 0.710000
249552 0.800000
499104 0.845000
998208 0.890000
2151860 0.926667
4638815 0.963333
10000000 1
